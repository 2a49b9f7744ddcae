package deploy

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
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
