package operatorpolicy

import (
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// TestRBAC: the operator's roles allow what internal/operator does and
// not what it does not (Secrets, other namespaces, pods anywhere but its
// own namespace, deleting the DNS resource).
func TestRBAC(t *testing.T) {
	t.Parallel()
	cr, crb, role, rb := RBAC()
	if crb.RoleRef.Name != cr.Name || rb.RoleRef.Name != role.Name || role.Namespace != Namespace || rb.Namespace != Namespace {
		t.Fatalf("bindings %v %v do not name the roles %s, %s/%s", crb.RoleRef, rb.RoleRef, cr.Name, role.Namespace, role.Name)
	}
	u := &user.DefaultInfo{Name: User}
	allows := func(a authorizer.AttributesRecord) bool {
		a.User, a.ResourceRequest = u, true
		rules := cr.Rules
		if a.Namespace == Namespace {
			rules = append(rules[:len(rules):len(rules)], role.Rules...)
		}
		return rbac.RulesAllow(a, rules...)
	}
	for _, tc := range []struct {
		a    authorizer.AttributesRecord
		want bool
	}{
		{authorizer.AttributesRecord{Verb: "watch", APIGroup: "operator.dnsplane.io", Resource: "dnses"}, true},
		{authorizer.AttributesRecord{Verb: "create", APIGroup: "operator.dnsplane.io", Resource: "dnses"}, true},
		{authorizer.AttributesRecord{Verb: "update", APIGroup: "operator.dnsplane.io", Resource: "dnses", Subresource: "status", Name: "default"}, true},
		{authorizer.AttributesRecord{Verb: "delete", APIGroup: "operator.dnsplane.io", Resource: "dnses", Name: "default"}, false},
		{authorizer.AttributesRecord{Verb: "create", Resource: "events", Namespace: "default"}, true},
		{authorizer.AttributesRecord{Verb: "get", Resource: "namespaces", Name: Namespace}, true},
		{authorizer.AttributesRecord{Verb: "get", Resource: "namespaces", Name: "kube-system"}, false},
		{authorizer.AttributesRecord{Verb: "update", Resource: "configmaps", Namespace: Namespace, Name: "dns-default"}, true},
		{authorizer.AttributesRecord{Verb: "list", Resource: "configmaps", Namespace: Namespace}, true},
		{authorizer.AttributesRecord{Verb: "update", Resource: "configmaps", Namespace: "kube-system", Name: "coredns"}, false},
		{authorizer.AttributesRecord{Verb: "create", Resource: "services", Namespace: Namespace}, true},
		{authorizer.AttributesRecord{Verb: "update", APIGroup: "apps", Resource: "daemonsets", Namespace: Namespace, Name: "dns-default"}, true},
		{authorizer.AttributesRecord{Verb: "create", APIGroup: "apps", Resource: "daemonsets", Namespace: "default"}, false},
		{authorizer.AttributesRecord{Verb: "get", Resource: "secrets", Namespace: Namespace, Name: "x"}, false},
		{authorizer.AttributesRecord{Verb: "list", Resource: "pods", Namespace: "default"}, false},
		{authorizer.AttributesRecord{Verb: "create", Resource: "pods", Namespace: Namespace}, false},
	} {
		if got := allows(tc.a); got != tc.want {
			t.Errorf("%s %s/%s %s in %q: allowed %v, want %v", tc.a.Verb, tc.a.APIGroup, tc.a.Resource, tc.a.Subresource, tc.a.Namespace, got, tc.want)
		}
	}
}
