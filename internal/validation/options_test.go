package validation

import (
	"testing"

	"github.com/dnsplane/dnsplane/internal/features"
)

func TestOptionsFromGates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		gates string
		want  Options
	}{
		{"", allOn},
		{"RelaxedDNSSearchValidation=false", strictOpts},
		{"PodDNSCustomPolicy=false", Options{RelaxedDNSSearchValidation: true, PodDNSAutopath: true}},
		{"PodDNSAutopath=false", Options{RelaxedDNSSearchValidation: true, PodDNSCustomPolicy: true}},
		{"RelaxedDNSSearchValidation=false,PodDNSCustomPolicy=false,PodDNSAutopath=false", Options{}},
		{"ServerSideFieldValidation=false", allOn},
	}
	for _, tt := range tests {
		fg, err := features.Parse(tt.gates)
		if err != nil {
			t.Fatal(err)
		}
		if got := OptionsFromGates(fg); got != tt.want {
			t.Errorf("OptionsFromGates(%q) = %+v, want %+v", tt.gates, got, tt.want)
		}
	}
	if got := OptionsFromGates(nil); got != allOn {
		t.Errorf("OptionsFromGates(nil) = %+v, want the defaults %+v", got, allOn)
	}
}
