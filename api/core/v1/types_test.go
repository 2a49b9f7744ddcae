package v1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestUpstreamDNSPolicies checks that the redeclared upstream policies are
// upstream's: their values are literals so hack/swaggerdoc can read them.
func TestUpstreamDNSPolicies(t *testing.T) {
	for _, tc := range []struct{ ours, upstream corev1.DNSPolicy }{
		{DNSClusterFirstWithHostNet, corev1.DNSClusterFirstWithHostNet},
		{DNSClusterFirst, corev1.DNSClusterFirst},
		{DNSDefault, corev1.DNSDefault},
		{DNSNone, corev1.DNSNone},
	} {
		if tc.ours != tc.upstream {
			t.Errorf("%q is upstream's %q", tc.ours, tc.upstream)
		}
	}
}
