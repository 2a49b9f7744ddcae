// Package escalation is kube-apiserver's RBAC privilege-escalation
// prevention for writes of Roles, ClusterRoles, RoleBindings and
// ClusterRoleBindings (k8s.io/kubernetes/pkg/registry/rbac/*/policybased,
// https://kubernetes.io/docs/reference/access-authn-authz/rbac/#privilege-escalation-prevention-and-bootstrapping):
// a user may put into a role, or bind, only permissions it already holds,
// unless it is in system:masters, may `escalate` the role it writes, or may
// `bind` the role a binding references.
//
// The decisions are upstream's functions (pkg/registry/rbac's
// EscalationAllowed, RoleEscalationAuthorized, BindingAuthorized,
// IsOnlyMutatingGCFields, and pkg/registry/rbac/validation's
// ConfirmNoEscalation). Upstream's policybased storages wrap
// k8s.io/apiserver's generic registry, which dnsplane does not use, so the
// kinds' strategies call Checker from their admission instead, with the
// request's user put where those functions look for it.
package escalation

import (
	"context"
	"errors"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacregistry "k8s.io/kubernetes/pkg/registry/rbac"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
)

// Checker makes the checks. A nil *Checker, or one without an Authorizer,
// checks nothing: offline validation and servers built without
// authorization, where every user may do everything anyway.
type Checker struct {
	// Authorizer is the server's: it says whether the user may escalate
	// or bind.
	Authorizer authorizer.Authorizer
	// Rules resolves the user's rules and a binding's role, from the
	// stored RBAC objects (authz.Authorizer.EscalationRules). nil when
	// --authorization-mode has no RBAC: then only system:masters and
	// users the Authorizer lets escalate or bind may write roles that
	// grant anything, as no rules can be compared.
	Rules rbacregistryvalidation.AuthorizationRuleResolver
}

// Write is one create (Old nil) or update of an RBAC object.
type Write struct {
	// Resource is the plural: roles, clusterroles, rolebindings,
	// clusterrolebindings.
	Resource  string
	Namespace string
	Name      string
	Object    runtime.Object
	Old       runtime.Object
}

func (w Write) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: rbacv1.GroupName, Resource: w.Resource}
}

// fullAuthority is what an aggregation rule may gather: anything. Only a
// user holding it may set or change one (upstream's clusterrole policybased
// storage).
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// Role checks a Role or ClusterRole write granting rules; aggregates says
// whether the new or the old object has an aggregation rule.
func (c *Checker) Role(ctx context.Context, w Write, rules []rbacv1.PolicyRule, aggregates bool) error {
	ctx, check := c.requestContext(ctx, w)
	if !check || rbacregistry.EscalationAllowed(ctx) || rbacregistry.RoleEscalationAuthorized(ctx, c.Authorizer) {
		return nil
	}
	if w.Old != nil && rbacregistry.IsOnlyMutatingGCFields(w.Object, w.Old, apiequality.Semantic) {
		return nil
	}
	if err := c.confirm(ctx, rules); err != nil {
		return apierrors.NewForbidden(w.groupResource(), w.Name, err)
	}
	if aggregates {
		if err := c.confirm(ctx, fullAuthority); err != nil {
			return apierrors.NewForbidden(w.groupResource(), w.Name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
	}
	return nil
}

// Binding checks a RoleBinding or ClusterRoleBinding write referencing ref.
func (c *Checker) Binding(ctx context.Context, w Write, ref rbacv1.RoleRef) error {
	ctx, check := c.requestContext(ctx, w)
	if !check || rbacregistry.EscalationAllowed(ctx) {
		return nil
	}
	if w.Old != nil && rbacregistry.IsOnlyMutatingGCFields(w.Object, w.Old, apiequality.Semantic) {
		return nil
	}
	internalRef := rbac.RoleRef{APIGroup: ref.APIGroup, Kind: ref.Kind, Name: ref.Name}
	if rbacregistry.BindingAuthorized(ctx, internalRef, w.Namespace, c.Authorizer) {
		return nil
	}
	if c.Rules == nil {
		return apierrors.NewForbidden(w.groupResource(), w.Name, errNoRules)
	}
	rules, err := c.Rules.GetRoleReferenceRules(ctx, ref, w.Namespace)
	if apierrors.IsNotFound(err) {
		// kube's resolver reads storage, whose 404 names the plural
		// (roles.rbac.authorization.k8s.io "x" not found); the
		// informers' listers name the singular.
		return apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: strings.ToLower(ref.Kind) + "s"}, ref.Name)
	}
	if err != nil {
		return err
	}
	if err := c.confirm(ctx, rules); err != nil {
		return apierrors.NewForbidden(w.groupResource(), w.Name, err)
	}
	return nil
}

var errNoRules = errors.New("RBAC permissions cannot be compared: --authorization-mode has no RBAC; only system:masters or a user allowed to escalate or bind may grant them")

func (c *Checker) confirm(ctx context.Context, rules []rbacv1.PolicyRule) error {
	if c.Rules == nil {
		return errNoRules
	}
	return rbacregistryvalidation.ConfirmNoEscalation(ctx, c.Rules, rules)
}

// requestContext puts the request's user, namespace and request info where
// upstream's checks read them (k8s.io/apiserver's request context), and
// reports whether there is anything to check: not for a nil Checker or one
// without an Authorizer, nor for writes without a user (the server's own,
// in process).
func (c *Checker) requestContext(ctx context.Context, w Write) (context.Context, bool) {
	if c == nil || c.Authorizer == nil {
		return ctx, false
	}
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return ctx, false
	}
	verb := "create"
	if w.Old != nil {
		verb = "update"
	}
	ctx = request.WithUser(ctx, authz.UserInfo(u))
	ctx = request.WithNamespace(ctx, w.Namespace)
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIGroup: rbacv1.GroupName, APIVersion: rbacv1.SchemeGroupVersion.Version,
		Resource: w.Resource, Namespace: w.Namespace, Name: w.Name,
	})
	return ctx, true
}
