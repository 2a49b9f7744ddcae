package hostresolv

import (
	"slices"
	"testing"
)

// sameList treats nil and empty as equal: a renderer writes both the same way.
func sameList(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return slices.Equal(a, b)
}

func assertConfig(t *testing.T, got, want Config) {
	t.Helper()
	if !sameList(got.Nameservers, want.Nameservers) {
		t.Errorf("nameservers = %q, want %q", got.Nameservers, want.Nameservers)
	}
	if !sameList(got.Searches, want.Searches) {
		t.Errorf("searches = %q, want %q", got.Searches, want.Searches)
	}
	if !sameList(got.Options, want.Options) {
		t.Errorf("options = %q, want %q", got.Options, want.Options)
	}
}
