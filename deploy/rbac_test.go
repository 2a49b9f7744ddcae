package deploy

import (
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/dnsplane/dnsplane/internal/operator"
)

// TestOperatorRBACIsTheOperators checks that the chart grants the operator
// exactly the rules internal/operator proves sufficient
// (TestOperatorRBACSuffices): no more, so the chart stays least-privilege,
// and no less, so the operator never meets a 403 on a stock cluster.
func TestOperatorRBACIsTheOperators(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(manifestsFile)
	if err != nil {
		t.Fatal(err)
	}
	objs := objectsOf(t, data)
	tests := []struct {
		key  string
		want []rbacv1.PolicyRule
		get  func(string) []rbacv1.PolicyRule
	}{
		{"ClusterRole//dnsplane-operator", operator.ClusterRoleRules(), func(k string) []rbacv1.PolicyRule {
			return decodeStrict[rbacv1.ClusterRole](t, objs, k).Rules
		}},
		{"Role/" + Namespace + "/dnsplane-operator", operator.RoleRules(), func(k string) []rbacv1.PolicyRule {
			return decodeStrict[rbacv1.Role](t, objs, k).Rules
		}},
		{"Role/default/dnsplane-operator-events", operator.EventRoleRules(), func(k string) []rbacv1.PolicyRule {
			return decodeStrict[rbacv1.Role](t, objs, k).Rules
		}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.get(tt.key)); diff != "" {
			t.Errorf("%s rules differ from internal/operator's (-want +chart):\n%s", tt.key, diff)
		}
	}
}

// TestClusterDNSServiceAccount checks that the ServiceAccount the
// operator's DaemonSet runs its pods as exists and may read what CoreDNS's
// kubernetes plugin lists: without it the pods run as "default", are
// refused every list, and answer no cluster name.
func TestClusterDNSServiceAccount(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(manifestsFile)
	if err != nil {
		t.Fatal(err)
	}
	objs := objectsOf(t, data)
	decodeStrict[corev1.ServiceAccount](t, objs, "ServiceAccount/"+Namespace+"/"+operator.ServiceAccountName)
	b := decodeStrict[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding//"+operator.ServiceAccountName)
	want := rbacv1.Subject{Kind: "ServiceAccount", Name: operator.ServiceAccountName, Namespace: Namespace}
	if len(b.Subjects) != 1 || b.Subjects[0] != want {
		t.Errorf("ClusterRoleBinding %s subjects %v, want [%v]", b.Name, b.Subjects, want)
	}
	role := decodeStrict[rbacv1.ClusterRole](t, objs, "ClusterRole//"+b.RoleRef.Name)
	allowed := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, gr := range []struct{ group, resource string }{{"", "services"}, {"", "namespaces"}, {"", "pods"}, {"discovery.k8s.io", "endpointslices"}} {
		for _, verb := range []string{"list", "watch"} {
			if !allowed(gr.group, gr.resource, verb) {
				t.Errorf("ClusterRole %s does not allow %s %s.%s", role.Name, verb, gr.resource, gr.group)
			}
		}
	}
}
