package authz

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// Policy is upstream's bootstrap policy: the ClusterRoles, ClusterRoleBindings,
// Roles and RoleBindings kube-apiserver's rbac/bootstrap-roles post-start
// hook keeps (pkg/registry/rbac/rest, PostStartHook), controllers' roles
// included.
type Policy struct {
	ClusterRoles        []rbacv1.ClusterRole
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
	Roles               map[string][]rbacv1.Role
	RoleBindings        map[string][]rbacv1.RoleBinding
}

// BootstrapPolicy is kube-apiserver's, from
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy.
func BootstrapPolicy() Policy {
	return Policy{
		ClusterRoles:        append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...),
		ClusterRoleBindings: append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...),
		Roles:               bootstrappolicy.NamespaceRoles(),
		RoleBindings:        bootstrappolicy.NamespaceRoleBindings(),
	}
}

// EnsurePolicy reconciles p through client as kube-apiserver does at every
// start, with component-helpers' reconciliation: a missing object is
// created; an existing one gets the rules or subjects it lacks added,
// unless it carries rbac.authorization.kubernetes.io/autoupdate: "false"
// (then it is left as the user changed it, and logged); nothing is removed.
// A failed object does not stop the others; the whole pass is retried
// every second for up to timeout, as the hook retries for 30s before
// failing the API server's start.
//
// Not done: priming aggregated ClusterRoles and splitting old
// ClusterRoleBindings, which migrate clusters made before Kubernetes 1.9
// and 1.6; dnsplane never wrote those objects.
func EnsurePolicy(ctx context.Context, client kubernetes.Interface, p Policy, timeout time.Duration, log *slog.Logger) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		last = ensurePolicy(ctx, client, p, log)
		if last != nil {
			log.Warn("reconciling the bootstrap RBAC policy", "err", last)
		}
		return last == nil, nil
	})
	if err != nil {
		if last != nil {
			return fmt.Errorf("reconciling the bootstrap RBAC policy: %w", last)
		}
		return fmt.Errorf("reconciling the bootstrap RBAC policy: %w", err)
	}
	return nil
}

// ensurePolicy is one pass; the error names the first object that failed.
func ensurePolicy(ctx context.Context, client kubernetes.Interface, p Policy, log *slog.Logger) error {
	// The reconciliation helpers take no context; a cancelled start-up
	// stops between objects.
	var first error
	note := func(kind, ns, name string, err error) {
		if err != nil && first == nil {
			first = fmt.Errorf("%s %s: %w", kind, nsName(ns, name), err)
		}
	}
	rbac := client.RbacV1()
	for i := range p.ClusterRoles {
		if err := ctx.Err(); err != nil {
			return err
		}
		o := reconciliation.ReconcileRoleOptions{
			Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: &p.ClusterRoles[i]},
			Client:  reconciliation.ClusterRoleModifier{Client: rbac.ClusterRoles()},
			Confirm: true,
		}
		note("clusterrole", "", p.ClusterRoles[i].Name, reconcileRole(o, log))
	}
	for i := range p.ClusterRoleBindings {
		if err := ctx.Err(); err != nil {
			return err
		}
		o := reconciliation.ReconcileRoleBindingOptions{
			RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &p.ClusterRoleBindings[i]},
			Client:      reconciliation.ClusterRoleBindingClientAdapter{Client: rbac.ClusterRoleBindings()},
			Confirm:     true,
		}
		note("clusterrolebinding", "", p.ClusterRoleBindings[i].Name, reconcileBinding(o, log))
	}
	for _, roles := range p.Roles {
		for i := range roles {
			if err := ctx.Err(); err != nil {
				return err
			}
			o := reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.RoleRuleOwner{Role: &roles[i]},
				Client:  reconciliation.RoleModifier{Client: rbac, NamespaceClient: client.CoreV1().Namespaces()},
				Confirm: true,
			}
			note("role", roles[i].Namespace, roles[i].Name, reconcileRole(o, log))
		}
	}
	for _, bindings := range p.RoleBindings {
		for i := range bindings {
			if err := ctx.Err(); err != nil {
				return err
			}
			o := reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &bindings[i]},
				Client:      reconciliation.RoleBindingClientAdapter{Client: rbac, NamespaceClient: client.CoreV1().Namespaces()},
				Confirm:     true,
			}
			note("rolebinding", bindings[i].Namespace, bindings[i].Name, reconcileBinding(o, log))
		}
	}
	// A first list of each kind proves storage answers, as the hook checks
	// before it starts; here it is after, so that the error is the real one.
	if first == nil {
		if _, err := rbac.ClusterRoles().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			first = fmt.Errorf("listing clusterroles: %w", err)
		}
	}
	return first
}

// retriable are the errors kube's hook retries an object on at once.
func retriable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsServiceUnavailable(err)
}

func reconcileRole(o reconciliation.ReconcileRoleOptions, log *slog.Logger) error {
	return retry.OnError(retry.DefaultBackoff, retriable, func() error {
		res, err := o.Run()
		if err != nil {
			return err
		}
		name := nsName(o.Role.GetNamespace(), o.Role.GetName())
		switch {
		case res.Protected && res.Operation != reconciliation.ReconcileNone:
			log.Warn("skipped reconcile-protected role with missing permissions", "role", name, "missing", len(res.MissingRules))
		case res.Operation == reconciliation.ReconcileUpdate:
			log.Debug("updated role with additional permissions", "role", name, "missing", len(res.MissingRules))
		case res.Operation == reconciliation.ReconcileCreate:
			log.Debug("created role", "role", name)
		}
		return nil
	})
}

func reconcileBinding(o reconciliation.ReconcileRoleBindingOptions, log *slog.Logger) error {
	return retry.OnError(retry.DefaultBackoff, retriable, func() error {
		res, err := o.Run()
		if err != nil {
			return err
		}
		name := nsName(o.RoleBinding.GetNamespace(), o.RoleBinding.GetName())
		switch {
		case res.Protected && res.Operation != reconciliation.ReconcileNone:
			log.Warn("skipped reconcile-protected binding with missing subjects", "binding", name, "missing", len(res.MissingSubjects))
		case res.Operation == reconciliation.ReconcileUpdate, res.Operation == reconciliation.ReconcileRecreate:
			log.Debug("reconciled binding", "binding", name, "operation", res.Operation)
		case res.Operation == reconciliation.ReconcileCreate:
			log.Debug("created binding", "binding", name)
		}
		return nil
	})
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// UserRoles is the policy of one of dnsplane's own roles run as a user of
// its own (the DNS operator, the cluster DNS): a ClusterRole and a Role in
// Namespace, both named Name, each bound to User, annotated for
// reconciliation as upstream's bootstrap roles are (an admin's
// autoupdate: "false" keeps their changes).
type UserRoles struct {
	Name, User, Namespace        string
	ClusterRules, NamespaceRules []rbacv1.PolicyRule
}

// Objects returns r's ClusterRole, ClusterRoleBinding, Role and
// RoleBinding.
func (r UserRoles) Objects() (rbacv1.ClusterRole, rbacv1.ClusterRoleBinding, rbacv1.Role, rbacv1.RoleBinding) {
	// A map each: an object's annotations must not alias another's.
	autoUpdate := func() map[string]string { return map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"} }
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: r.User}
	cr := rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: r.Name, Annotations: autoUpdate()}, Rules: r.ClusterRules}
	crb := rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Annotations: autoUpdate()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
		Subjects:   []rbacv1.Subject{subject},
	}
	role := rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace, Annotations: autoUpdate()}, Rules: r.NamespaceRules}
	rb := rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace, Annotations: autoUpdate()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name},
		Subjects:   []rbacv1.Subject{subject},
	}
	return cr, crb, role, rb
}
