package searchopt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

func TestSetup(t *testing.T) {
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	content := "nameserver 10.0.0.10\nsearch old.example\n# comment\nsearch Foo.com. . bar.com\noptions ndots:5\n"
	if err := os.WriteFile(resolv, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.conf")
	if err := os.WriteFile(empty, []byte("nameserver 1.1.1.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		input      string
		wantErr    string
		cd         string
		code       uint16
		hostSearch []string
	}{
		{"defaults", "searchopt", "", "cluster.local", 65534, []string{"foo.com", "bar.com"}},
		{"defaults empty block", "searchopt {\n}", "", "cluster.local", 65534, []string{"foo.com", "bar.com"}},
		{"cluster domain", "searchopt My.Cluster. {\nresolv_conf " + empty + "\n}", "", "my.cluster", 65534, nil},
		{"code", "searchopt {\ncode 65001\nhost_search a.com\n}", "", "cluster.local", 65001, []string{"a.com"}},
		{"host_search", "searchopt cluster.local {\nhost_search foo.com Bar.com.\n}", "", "cluster.local", 65534, []string{"foo.com", "bar.com"}},
		{"host_search twice adds", "searchopt {\nhost_search foo.com\nhost_search bar.com\n}", "", "cluster.local", 65534, []string{"foo.com", "bar.com"}},
		{"resolv_conf", "searchopt {\nresolv_conf " + resolv + "\n}", "", "cluster.local", 65534, []string{"foo.com", "bar.com"}},
		{"host_search wins over resolv_conf", "searchopt {\nresolv_conf " + resolv + "\nhost_search x.org\n}", "", "cluster.local", 65534, []string{"x.org"}},

		{"too many args", "searchopt a.local b.local", "Wrong argument count", "", 0, nil},
		{"bad cluster domain", "searchopt bad..domain", "cluster domain", "", 0, nil},
		{"bad code", "searchopt {\ncode abc\n}", "code", "", 0, nil},
		{"code out of range", "searchopt {\ncode 53\n}", "code", "", 0, nil},
		{"code too big", "searchopt {\ncode 70000\n}", "code", "", 0, nil},
		{"code no arg", "searchopt {\ncode\n}", "Wrong argument count", "", 0, nil},
		{"host_search no arg", "searchopt {\nhost_search\n}", "Wrong argument count", "", 0, nil},
		{"bad host_search", "searchopt {\nhost_search a*b.com\n}", "host_search", "", 0, nil},
		{"resolv_conf missing", "searchopt {\nresolv_conf " + filepath.Join(dir, "nope") + "\n}", "resolv_conf", "", 0, nil},
		{"resolv_conf two args", "searchopt {\nresolv_conf a b\n}", "Wrong argument count", "", 0, nil},
		{"unknown property", "searchopt {\nfoo bar\n}", "unknown property", "", 0, nil},
		{"twice", "searchopt {\nhost_search a.com\n}\nsearchopt {\nhost_search a.com\n}", "more than once", "", 0, nil},
	}
	// The default resolv.conf is the temp file, not the host's.
	saved := defaultResolvConf
	defer func() { defaultResolvConf = saved }()
	defaultResolvConf = resolv
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := caddy.NewTestController("dns", tt.input)
			s, err := parse(c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parse(%q) error %v, want one containing %q", tt.input, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.input, err)
			}
			if s.ClusterDomain != tt.cd || s.Code != tt.code || !reflect.DeepEqual(s.HostSearch, tt.hostSearch) {
				t.Errorf("parse(%q) = %q %d %q, want %q %d %q", tt.input, s.ClusterDomain, s.Code, s.HostSearch, tt.cd, tt.code, tt.hostSearch)
			}
		})
	}
}

// TestSetupDefaultResolvConfMissing: an absent default resolv.conf means no
// host search list, not an error.
func TestSetupDefaultResolvConfMissing(t *testing.T) {
	saved := defaultResolvConf
	defer func() { defaultResolvConf = saved }()
	defaultResolvConf = filepath.Join(t.TempDir(), "missing")
	s, err := parse(caddy.NewTestController("dns", "searchopt"))
	if err != nil || s.HostSearch != nil {
		t.Fatalf("parse = %+v, %v; want no host search list and no error", s, err)
	}
}

// TestSetupRegisters runs the real setup function, which adds the handler
// to the server config.
func TestSetupRegisters(t *testing.T) {
	c := caddy.NewTestController("dns", "searchopt {\nhost_search foo.com\n}")
	if err := setup(c); err != nil {
		t.Fatal(err)
	}
	c = caddy.NewTestController("dns", "searchopt {\nbogus\n}")
	if err := setup(c); err == nil || !strings.HasPrefix(err.Error(), "plugin/searchopt:") {
		t.Fatalf("setup error %v, want a plugin/searchopt error", err)
	}
}

func TestReadSearch(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"none", "nameserver 1.1.1.1\n", nil},
		{"last wins", "search a.com b.com\nsearch c.com\n", []string{"c.com"}},
		{"trailing dot and root", "search a.com. . b.com\n", []string{"a.com", "b.com"}},
		{"empty last line clears", "search a.com\nsearch\n", nil},
		{"invalid skipped", "search a*b.com ok.com\n", []string{"ok.com"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "r"+string(rune('0'+i)))
			if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readSearch(p)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("readSearch = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
