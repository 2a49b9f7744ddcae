package podfiles

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestDirNameRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		ns, name string
		uid      types.UID
	}{
		{"default", "web", "6a1c2f3e-0000-4000-8000-000000000001"},
		{"ns1", "a.b.c", "u"},
	} {
		base := DirName(tc.ns, tc.name, tc.uid)
		ns, name, uid, err := ParseDirName(base)
		if err != nil || ns != tc.ns || name != tc.name || uid != tc.uid {
			t.Errorf("ParseDirName(%q) = %q, %q, %q, %v", base, ns, name, uid, err)
		}
	}
	for _, bad := range []string{"", "a_b", "a__c", "a_b_c_d", "_b_c"} {
		if _, _, _, err := ParseDirName(bad); err == nil {
			t.Errorf("ParseDirName(%q): want an error", bad)
		}
	}
}
