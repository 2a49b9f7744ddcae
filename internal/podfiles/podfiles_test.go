package podfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

const uuid = types.UID("6a1c2f3e-0000-4000-8000-000000000001")

func TestDirNameRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ns, name string
		uid      types.UID
	}{
		{"default", "web", uuid},
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

// label is a DNS label of n bytes.
func label(c string, n int) string { return strings.Repeat(c, n) }

// subdomain is a DNS subdomain of n bytes (labels of 63 joined by dots).
func subdomain(c string, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(label(c, min(63, n-b.Len())))
	}
	s := b.String()
	if s[len(s)-1] == '.' { // n fell right after a dot
		s = s[:len(s)-1] + c
	}
	return s
}

// Every valid pod gets a directory name a file system takes: the longest
// namespace (63) and name (253) with a UUID make 354 bytes, over NAME_MAX.
func TestDirNameFitsNameMax(t *testing.T) {
	t.Parallel()
	ns63, name253 := label("n", 63), subdomain("p", 253)
	if len(ns63) != 63 || len(name253) != 253 {
		t.Fatalf("lengths %d %d", len(ns63), len(name253))
	}
	fits := NameMax - len(uuid) - 2 // namespace + name bytes that keep the plain form
	for _, tc := range []struct {
		what, ns, name string
		plain          bool // <ns>_<name>_<uid>, as before long names were handled
	}{
		{"short", "default", "web", true},
		{"exactly NAME_MAX", "ns1", subdomain("a", fits-3), true},
		{"one over", "ns1", subdomain("a", fits-2), false},
		{"longest", ns63, name253, false},
	} {
		t.Run(tc.what, func(t *testing.T) {
			t.Parallel()
			base := DirName(tc.ns, tc.name, uuid)
			plain := tc.ns + "_" + tc.name + "_" + string(uuid)
			if tc.plain != (base == plain) {
				t.Fatalf("DirName = %q, plain form %v, want %v", base, base == plain, tc.plain)
			}
			if len(base) > NameMax {
				t.Fatalf("DirName is %d bytes", len(base))
			}
			if !tc.plain && len(base) != NameMax {
				t.Errorf("shortened DirName is %d bytes, want all %d used", len(base), NameMax)
			}
			ns, name, uid, err := ParseDirName(base)
			if err != nil || ns != tc.ns || uid != uuid || !strings.HasPrefix(tc.name, strings.SplitN(name, shortMark, 2)[0]) {
				t.Errorf("ParseDirName(%q) = %q, %q, %q, %v", base, ns, name, uid, err)
			}
			if DirName(tc.ns, tc.name, uuid) != base {
				t.Error("not deterministic")
			}
			// The file system takes it.
			dir := Dir(t.TempDir(), tc.ns, tc.name, uuid)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ResolvConf), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Two long names that share the kept prefix get different directories.
	a, b := DirName(ns63, name253, uuid), DirName(ns63, name253[:252]+"q", uuid)
	if a == b {
		t.Errorf("%q for two names", a)
	}
}

// FuzzDirName: for any namespace and name (without "_" or "/", as the API
// guarantees) and a UUID, the directory name fits NAME_MAX, names no
// subdirectory, and parses back to the namespace and UID.
func FuzzDirName(f *testing.F) {
	f.Add("default", "web")
	f.Add(label("n", 63), subdomain("p", 253))
	f.Fuzz(func(t *testing.T, ns, name string) {
		if ns == "" || name == "" || len(ns) > 63 || len(name) > 253 || strings.ContainsAny(ns+name, "_/~") {
			t.Skip()
		}
		base := DirName(ns, name, uuid)
		if len(base) > NameMax || strings.Contains(base, "/") {
			t.Fatalf("DirName(%q, %q) = %q (%d bytes)", ns, name, base, len(base))
		}
		gotNS, _, uid, err := ParseDirName(base)
		if err != nil || gotNS != ns || uid != uuid {
			t.Fatalf("ParseDirName(%q) = %q, %q, %v", base, gotNS, uid, err)
		}
	})
}
