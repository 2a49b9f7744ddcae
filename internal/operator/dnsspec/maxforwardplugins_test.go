package dnsspec

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// TestMaxForwardPlugins: more than MaxForwardPlugins is refused on create
// and on an update that lengthens the list, with Kubernetes' TooMany
// wording; an update of a list stored longer before the bound that does
// not lengthen it passes.
func TestMaxForwardPlugins(t *testing.T) {
	t.Parallel()
	spec := func(n int) *operatorv1.DNSSpec {
		s := &operatorv1.DNSSpec{}
		for i := range n {
			s.PluginConfig.ForwardPlugins = append(s.PluginConfig.ForwardPlugins,
				operatorv1.ForwardPlugin{Domain: fmt.Sprintf("fwd%d.example", i), NameServers: []string{"192.0.2.1"}})
		}
		return s
	}
	path := field.NewPath("spec")
	const want = "spec.pluginConfig.forwardPlugins: Too many: 151: must have at most 150 items"
	tests := []struct {
		name     string
		spec     *operatorv1.DNSSpec
		old      *operatorv1.DNSSpec
		wantErrs []string
	}{
		{"at the bound", spec(MaxForwardPlugins), nil, nil},
		{"one over", spec(MaxForwardPlugins + 1), nil, []string{want}},
		{"lengthened over", spec(MaxForwardPlugins + 1), spec(MaxForwardPlugins), []string{want}},
		{"stored over, shortened", spec(MaxForwardPlugins + 1), spec(MaxForwardPlugins + 2), nil},
		{"stored over, unchanged", spec(MaxForwardPlugins + 1), spec(MaxForwardPlugins + 1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var errs field.ErrorList
			if tt.old == nil {
				errs = ValidateSpec(tt.spec, "", path)
			} else {
				errs = ValidateSpecUpdate(tt.spec, tt.old, "", path)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantErrs) {
				t.Errorf("errors = %q, want %q", got, tt.wantErrs)
			}
		})
	}
}
