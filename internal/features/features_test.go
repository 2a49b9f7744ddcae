package features

import (
	"strings"
	"testing"

	"k8s.io/component-base/featuregate"
)

func TestDefaultsAreOn(t *testing.T) {
	fg := New()
	for _, f := range []featuregate.Feature{RelaxedDNSSearchValidation, PodDNSCustomPolicy, PodDNSAutopath, ServerSideFieldValidation} {
		if !fg.Enabled(f) {
			t.Errorf("%s: default off, want on", f)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		value   string
		feature featuregate.Feature
		want    bool
		wantErr string
	}{
		{value: "", feature: PodDNSAutopath, want: true},
		{value: "RelaxedDNSSearchValidation=false", feature: RelaxedDNSSearchValidation, want: false},
		{value: "PodDNSCustomPolicy=false,PodDNSAutopath=true", feature: PodDNSCustomPolicy, want: false},
		{value: "NoSuchGate=true", wantErr: "unrecognized feature gate: NoSuchGate"},
		{value: "PodDNSAutopath=maybe", wantErr: "invalid value of PodDNSAutopath=maybe"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			fg, err := Parse(tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want containing %q", tt.value, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.value, err)
			}
			if got := fg.Enabled(tt.feature); got != tt.want {
				t.Errorf("%s = %v, want %v", tt.feature, got, tt.want)
			}
		})
	}
}

func TestGateSetsAreIndependent(t *testing.T) {
	a, b := New(), New()
	if err := a.Set("PodDNSAutopath=false"); err != nil {
		t.Fatal(err)
	}
	if !b.Enabled(PodDNSAutopath) {
		t.Fatal("changing one gate set changed another")
	}
}
