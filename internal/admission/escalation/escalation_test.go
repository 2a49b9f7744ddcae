package escalation_test

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/dnsplane/dnsplane/internal/admission/escalation"
	"github.com/dnsplane/dnsplane/internal/authn"
)

func rule(verbs, resources []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{""}, Resources: resources}
}

func rbacRule(verbs, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{rbacv1.GroupName}, Resources: resources, ResourceNames: names}
}

func binding(ns, name, roleKind, role, user string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
}

// checker is the server's pair over a fixed policy: the real RBAC
// authorizer and rule resolver, as internal/authz builds them over
// informers. In namespace "team": carol manages roles and bindings and
// reads config maps; dave may also escalate roles and bind "view"; erin
// manages roles without holding anything.
func checker() *escalation.Checker {
	manage := rbacRule([]string{"create", "update", "patch"}, []string{"roles", "rolebindings"})
	resolver, static := rbacregistryvalidation.NewTestRuleResolver(
		[]*rbacv1.Role{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "carol"}, Rules: []rbacv1.PolicyRule{manage, rule([]string{"get", "list"}, []string{"configmaps"})}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "dave"}, Rules: []rbacv1.PolicyRule{manage,
				rbacRule([]string{"escalate"}, []string{"roles"}), rbacRule([]string{"bind"}, []string{"clusterroles"}, "view")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "erin"}, Rules: []rbacv1.PolicyRule{manage}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "config-reader"}, Rules: []rbacv1.PolicyRule{rule([]string{"get"}, []string{"configmaps"})}},
		},
		[]*rbacv1.RoleBinding{
			binding("team", "carol", "Role", "carol", "carol"),
			binding("team", "dave", "Role", "dave", "dave"),
			binding("team", "erin", "Role", "erin", "erin"),
		},
		[]*rbacv1.ClusterRole{
			{ObjectMeta: metav1.ObjectMeta{Name: "view"}, Rules: []rbacv1.PolicyRule{rule([]string{"get", "list", "watch"}, []string{"pods", "configmaps"})}},
			{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}},
		},
		nil)
	return &escalation.Checker{Authorizer: rbac.New(static, static, static, static), Rules: resolver}
}

func TestChecker(t *testing.T) {
	t.Parallel()
	c := checker()
	as := func(name string, groups ...string) context.Context {
		return authn.WithUser(context.Background(), authn.User{Name: name, Groups: append(groups, "system:authenticated")})
	}
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}, Rules: rules}
	}
	readSecrets := rule([]string{"get"}, []string{"secrets"})
	readConfig := rule([]string{"get"}, []string{"configmaps"})
	roleWrite := func(r, old *rbacv1.Role) escalation.Write {
		w := escalation.Write{Resource: "roles", Namespace: "team", Name: r.Name, Object: r}
		if old != nil {
			w.Old = old
		}
		return w
	}
	bindWrite := func(b *rbacv1.RoleBinding) escalation.Write {
		return escalation.Write{Resource: "rolebindings", Namespace: b.Namespace, Name: b.Name, Object: b}
	}
	old := role("held", readConfig)
	gcOnly := old.DeepCopy()
	gcOnly.Finalizers = []string{"example.com/keep"}
	relabeled := old.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		do   func(context.Context) error
		// want is "" for allowed, else a substring of the 403's message;
		// notFound wants the resolver's error for the missing role as is
		// (the informers' lister makes it kube's 404; e2e checks it).
		want     string
		notFound bool
	}{
		{name: "a role with what its author holds", ctx: as("carol"),
			do: func(ctx context.Context) error {
				return c.Role(ctx, roleWrite(role("r", readConfig), nil), []rbacv1.PolicyRule{readConfig}, false)
			}},
		{name: "a role with more than its author holds", ctx: as("carol"),
			do: func(ctx context.Context) error {
				return c.Role(ctx, roleWrite(role("r", readSecrets), nil), []rbacv1.PolicyRule{readSecrets}, false)
			},
			want: `roles.rbac.authorization.k8s.io "r" is forbidden: user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{name: "system:masters may grant anything", ctx: as("root", "system:masters"),
			do: func(ctx context.Context) error {
				return c.Role(ctx, roleWrite(role("r", readSecrets), nil), []rbacv1.PolicyRule{readSecrets}, false)
			}},
		{name: "escalate on roles lets its holder grant what it lacks", ctx: as("dave"),
			do: func(ctx context.Context) error {
				return c.Role(ctx, roleWrite(role("r", readSecrets), nil), []rbacv1.PolicyRule{readSecrets}, false)
			}},
		{name: "an update changing only finalizers is not checked", ctx: as("erin"),
			do: func(ctx context.Context) error { return c.Role(ctx, roleWrite(gcOnly, old), gcOnly.Rules, false) }},
		{name: "an update changing labels is checked", ctx: as("erin"),
			do:   func(ctx context.Context) error { return c.Role(ctx, roleWrite(relabeled, old), relabeled.Rules, false) },
			want: `user "erin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held`},
		{name: "an aggregation rule needs everything", ctx: as("dave"),
			do: func(ctx context.Context) error {
				r := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}}
				return c.Role(ctx, escalation.Write{Resource: "clusterroles", Name: "agg", Object: r}, nil, true)
			},
			want: `clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`},
		{name: "binding a role whose rules its author holds", ctx: as("carol"),
			do: func(ctx context.Context) error {
				return c.Binding(ctx, bindWrite(binding("team", "b", "Role", "config-reader", "bob")), rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "config-reader"})
			}},
		{name: "binding cluster-admin in a namespace", ctx: as("carol"),
			do: func(ctx context.Context) error {
				return c.Binding(ctx, bindWrite(binding("team", "b", "ClusterRole", "cluster-admin", "carol")), rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"})
			},
			want: `rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" + `{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`},
		{name: "bind on the role lets its holder bind what it lacks", ctx: as("dave"),
			do: func(ctx context.Context) error {
				return c.Binding(ctx, bindWrite(binding("team", "b", "ClusterRole", "view", "bob")), rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"})
			}},
		{name: "bind on one role is not bind on another", ctx: as("dave"),
			do: func(ctx context.Context) error {
				return c.Binding(ctx, bindWrite(binding("team", "b", "ClusterRole", "cluster-admin", "bob")), rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"})
			},
			want: "is attempting to grant RBAC permissions not currently held"},
		{name: "binding a role that does not exist", ctx: as("carol"),
			do: func(ctx context.Context) error {
				return c.Binding(ctx, bindWrite(binding("team", "b", "Role", "nosuch", "bob")), rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "nosuch"})
			},
			notFound: true},
		{name: "the server's own writes have no user", ctx: context.Background(),
			do: func(ctx context.Context) error {
				return c.Role(ctx, roleWrite(role("r", readSecrets), nil), []rbacv1.PolicyRule{readSecrets}, false)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.do(tc.ctx)
			switch {
			case tc.notFound:
				if err == nil || apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not found") {
					t.Fatalf("want the role's not found, got %v", err)
				}
			case tc.want == "":
				if err != nil {
					t.Fatalf("want allowed, got %v", err)
				}
			case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("want a 403 with %q, got %v", tc.want, err)
			}
		})
	}
}

// TestWithoutRBAC: with no rules to compare (--authorization-mode without
// RBAC) only an authorizer's escalate or bind lets a non-master grant, and
// a nil Checker or one without an Authorizer checks nothing.
func TestWithoutRBAC(t *testing.T) {
	t.Parallel()
	ctx := authn.WithUser(context.Background(), authn.User{Name: "carol", Groups: []string{"system:authenticated"}})
	r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "r"}}
	w := escalation.Write{Resource: "roles", Namespace: "team", Name: "r", Object: r}
	_, static := rbacregistryvalidation.NewTestRuleResolver(nil, nil, nil, nil)
	noRules := &escalation.Checker{Authorizer: rbac.New(static, static, static, static)}
	if err := noRules.Role(ctx, w, []rbacv1.PolicyRule{rule([]string{"get"}, []string{"secrets"})}, false); !apierrors.IsForbidden(err) {
		t.Errorf("without rules: want a 403, got %v", err)
	}
	var none *escalation.Checker
	for _, c := range []*escalation.Checker{none, {}} {
		if err := c.Role(ctx, w, []rbacv1.PolicyRule{rule([]string{"get"}, []string{"secrets"})}, false); err != nil {
			t.Errorf("%#v: want no check, got %v", c, err)
		}
	}
}
