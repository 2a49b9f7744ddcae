package clusterdnspolicy

import (
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// TestRBAC: the cluster DNS may list and watch what CoreDNS's kubernetes
// plugin and the Corefile's ConfigMap need, and nothing else: no get of
// single objects it never asks for, no Secrets, no pods, no writes.
func TestRBAC(t *testing.T) {
	t.Parallel()
	cr, crb, role, rb := RBAC()
	if crb.RoleRef.Name != cr.Name || rb.RoleRef.Name != role.Name || role.Namespace != Namespace || rb.Namespace != Namespace {
		t.Fatalf("bindings %v %v do not name the roles %s, %s/%s", crb.RoleRef, rb.RoleRef, cr.Name, role.Namespace, role.Name)
	}
	for _, b := range [][]string{{crb.Subjects[0].Name, crb.Subjects[0].Kind}, {rb.Subjects[0].Name, rb.Subjects[0].Kind}} {
		if b[0] != User || b[1] != "User" {
			t.Errorf("binding subject %v, want the user %s", b, User)
		}
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
		{authorizer.AttributesRecord{Verb: "list", Resource: "services"}, true},
		{authorizer.AttributesRecord{Verb: "watch", Resource: "services"}, true},
		{authorizer.AttributesRecord{Verb: "list", Resource: "namespaces"}, true},
		{authorizer.AttributesRecord{Verb: "watch", APIGroup: "discovery.k8s.io", Resource: "endpointslices"}, true},
		{authorizer.AttributesRecord{Verb: "list", APIGroup: "discovery.k8s.io", Resource: "endpointslices"}, true},
		{authorizer.AttributesRecord{Verb: "list", Resource: "configmaps", Namespace: Namespace, Name: ConfigMap}, true},
		{authorizer.AttributesRecord{Verb: "watch", Resource: "configmaps", Namespace: Namespace, Name: ConfigMap}, true},
		// Every ConfigMap of the namespace, or another one, or a write.
		{authorizer.AttributesRecord{Verb: "list", Resource: "configmaps", Namespace: Namespace}, false},
		{authorizer.AttributesRecord{Verb: "list", Resource: "configmaps", Namespace: Namespace, Name: "other"}, false},
		{authorizer.AttributesRecord{Verb: "list", Resource: "configmaps", Namespace: "kube-system", Name: ConfigMap}, false},
		{authorizer.AttributesRecord{Verb: "update", Resource: "configmaps", Namespace: Namespace, Name: ConfigMap}, false},
		{authorizer.AttributesRecord{Verb: "get", Resource: "secrets", Namespace: Namespace, Name: "x"}, false},
		{authorizer.AttributesRecord{Verb: "list", Resource: "secrets"}, false},
		{authorizer.AttributesRecord{Verb: "list", Resource: "pods"}, false},
		{authorizer.AttributesRecord{Verb: "list", Resource: "endpoints"}, false},
		{authorizer.AttributesRecord{Verb: "get", Resource: "services", Namespace: "default", Name: "kubernetes"}, false},
		{authorizer.AttributesRecord{Verb: "create", Resource: "services", Namespace: "default"}, false},
		{authorizer.AttributesRecord{Verb: "delete", APIGroup: "discovery.k8s.io", Resource: "endpointslices", Namespace: "default", Name: "x"}, false},
		{authorizer.AttributesRecord{Verb: "list", APIGroup: "operator.dnsplane.io", Resource: "dnses"}, false},
	} {
		if got := allows(tc.a); got != tc.want {
			t.Errorf("%s %s/%s %q in %q: allowed %v, want %v", tc.a.Verb, tc.a.APIGroup, tc.a.Resource, tc.a.Name, tc.a.Namespace, got, tc.want)
		}
	}
}
