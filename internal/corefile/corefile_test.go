package corefile

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name    string
		c       Corefile
		want    string
		wantErr string
	}{
		{name: "empty", c: Corefile{}, want: ""},
		{
			name: "one block",
			c: Corefile{Servers: []Server{{
				Zones:   []string{".:53"},
				Plugins: []Plugin{{Name: "errors"}, {Name: "cache", Args: []string{"30"}}},
			}}},
			want: ".:53 {\n    errors\n    cache 30\n}\n",
		},
		{
			name: "sub-blocks and several blocks",
			c: Corefile{Servers: []Server{
				{
					Zones: []string{"cluster.local:53", "ap.k8s.io:53"},
					Plugins: []Plugin{
						{Name: "forward", Args: []string{".", "10.0.0.1:53"}, Block: []Directive{{Name: "force_tcp"}, {Name: "max_fails", Args: []string{"3"}}}},
					},
				},
				{Zones: []string{"dns://.:1053"}, Plugins: []Plugin{{Name: "whoami"}}},
			}},
			want: `cluster.local:53 ap.k8s.io:53 {
    forward . 10.0.0.1:53 {
        force_tcp
        max_fails 3
    }
}

dns://.:1053 {
    whoami
}
`,
		},
		{name: "block without plugins", c: Corefile{Servers: []Server{{Zones: []string{"."}}}}, want: ". {\n}\n"},
		{name: "no zones", c: Corefile{Servers: []Server{{}}}, wantErr: "server block 1: no zones"},
		{name: "zone with a space", c: Corefile{Servers: []Server{{Zones: []string{"a b"}}}}, wantErr: `server block 1: zone "a b" contains whitespace or a Corefile metacharacter`},
		{
			name:    "argument closing the block",
			c:       Corefile{Servers: []Server{{Zones: []string{"."}, Plugins: []Plugin{{Name: "hosts", Args: []string{"/x}\nforward"}}}}}},
			wantErr: `server block 1: hosts: argument "/x}\nforward" contains whitespace`,
		},
		{
			name:    "empty argument",
			c:       Corefile{Servers: []Server{{Zones: []string{"."}, Plugins: []Plugin{{Name: "cache", Args: []string{""}}}}}},
			wantErr: `cache: argument "" is empty`,
		},
		{
			name: "property argument with a comment",
			c: Corefile{Servers: []Server{{Zones: []string{"."}, Plugins: []Plugin{
				{Name: "kubernetes", Block: []Directive{{Name: "kubeconfig", Args: []string{"/a#b"}}}},
			}}}},
			wantErr: `plugin kubernetes: kubeconfig: argument "/a#b" contains`,
		},
		{name: "upper-case name", c: Corefile{Servers: []Server{{Zones: []string{"."}, Plugins: []Plugin{{Name: "Cache"}}}}}, wantErr: `plugin or property name "Cache"`},
		{name: "empty property name", c: Corefile{Servers: []Server{{Zones: []string{"."}, Plugins: []Plugin{{Name: "cache", Block: []Directive{{}}}}}}}, wantErr: "plugin cache: empty plugin or property name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Render()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestCheckToken(t *testing.T) {
	ok := []string{".", ".:53", "cluster.local", "/var/lib/dnsplane/kubeconfig", "[2001:db8::1]:53", "10.0.0.0/16", `C:\dir`, "ünïcode.example"}
	bad := []string{"", "a b", "a\tb", "a\nb", "a\rb", "a\u00a0b", "a\u2028b", "a\x00b", "a{b", "a}b", "{$HOME}", `a"b`, "a#b", "a;b", "\xff"}
	for _, s := range ok {
		if err := CheckToken(s); err != nil {
			t.Errorf("CheckToken(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range bad {
		err := CheckToken(s)
		var te *TokenError
		if !errors.As(err, &te) || te.Value != s {
			t.Errorf("CheckToken(%q) = %v, want a *TokenError naming it", s, err)
		}
	}
}

// tokens splits Corefile text the way CoreDNS's lexer does for text
// without quotes or comments: on Unicode whitespace.
func tokens(s string) []string { return strings.FieldsFunc(s, unicode.IsSpace) }

// FuzzRender: whatever the values, Render either rejects them or writes
// text that splits back into exactly the tokens it was given, with braces
// only where blocks are.
func FuzzRender(f *testing.F) {
	f.Add(".:53", "forward", ".", "10.0.0.1", "force_tcp", "x")
	f.Add("a b", "cache", "3 0", "}", "x\ny", "#")
	f.Add("{$X}", "a-b_c", "", `"q"`, "pods", "in;secure")
	f.Fuzz(func(t *testing.T, zone, name, arg1, arg2, prop, propArg string) {
		c := Corefile{Servers: []Server{{
			Zones: []string{zone, "ap.k8s.io:53"},
			Plugins: []Plugin{
				{Name: name, Args: []string{arg1, arg2}, Block: []Directive{{Name: prop, Args: []string{propArg}}}},
				{Name: "errors"},
			},
		}}}
		out, err := c.Render()
		if err != nil {
			// Rejected: one of the values must fail the same checks.
			valid := CheckToken(zone) == nil && checkName(name) == nil && CheckToken(arg1) == nil &&
				CheckToken(arg2) == nil && checkName(prop) == nil && CheckToken(propArg) == nil
			if valid {
				t.Fatalf("Render rejected valid values: %v", err)
			}
			return
		}
		want := []string{zone, "ap.k8s.io:53", "{", name, arg1, arg2, "{", prop, propArg, "}", "errors", "}"}
		if got := tokens(out); !slices.Equal(got, want) {
			t.Fatalf("rendered %q tokenises to %q, want %q", out, got, want)
		}
		if again, _ := c.Render(); again != out {
			t.Fatalf("second rendering differs:\n%s\n%s", out, again)
		}
	})
}

// TestNoCoreDNSDependency: rendering a Corefile must not link (and so not
// initialise) CoreDNS or its plugins: the operator and the offline
// `dnsplane corefile` build Corefiles without serving them.
func TestNoCoreDNSDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/coredns/") || strings.HasPrefix(p, "github.com/miekg/dns") {
			t.Errorf("internal/corefile depends on %s", p)
		}
	}
}
