package searchexpand

import (
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

func TestSetup(t *testing.T) {
	pfx := func(s ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, p := range s {
			out = append(out, netip.MustParsePrefix(p))
		}
		return out
	}
	tests := []struct {
		name    string
		input   string
		wantErr string
		cd      string
		code    uint16
		trusted []netip.Prefix
	}{
		{"defaults", "searchexpand", "", "cluster.local", 65534, nil},
		{"defaults empty block", "searchexpand {\n}", "", "cluster.local", 65534, nil},
		{"cluster domain", "searchexpand My.Cluster.", "", "my.cluster", 65534, nil},
		{"code low end", "searchexpand {\ncode 65001\n}", "", "cluster.local", 65001, nil},
		{"code high end", "searchexpand cluster.local {\ncode 65534\n}", "", "cluster.local", 65534, nil},
		{"trusted", "searchexpand {\ntrusted 10.0.0.0/8 fd00::/8\n}", "", "cluster.local", 65534, pfx("10.0.0.0/8", "fd00::/8")},
		{"trusted masked and single address", "searchexpand {\ntrusted 10.1.2.3/16 192.0.2.7\n}", "", "cluster.local", 65534, pfx("10.1.0.0/16", "192.0.2.7/32")},
		{"trusted twice adds", "searchexpand {\ntrusted 10.0.0.0/8\ntrusted 172.16.0.0/12\n}", "", "cluster.local", 65534, pfx("10.0.0.0/8", "172.16.0.0/12")},

		{"too many args", "searchexpand a.local b.local", "Wrong argument count", "", 0, nil},
		{"bad cluster domain", "searchexpand bad..domain", "cluster domain", "", 0, nil},
		{"bad code", "searchexpand {\ncode abc\n}", "code", "", 0, nil},
		{"code below range", "searchexpand {\ncode 65000\n}", "code", "", 0, nil},
		{"code 65535", "searchexpand {\ncode 65535\n}", "code", "", 0, nil},
		{"code too big", "searchexpand {\ncode 70000\n}", "code", "", 0, nil},
		{"code no arg", "searchexpand {\ncode\n}", "Wrong argument count", "", 0, nil},
		{"code two args", "searchexpand {\ncode 65001 65002\n}", "Wrong argument count", "", 0, nil},
		{"trusted no arg", "searchexpand {\ntrusted\n}", "Wrong argument count", "", 0, nil},
		{"trusted bad", "searchexpand {\ntrusted 10.0.0.0/33\n}", "trusted", "", 0, nil},
		{"trusted not an address", "searchexpand {\ntrusted node.example\n}", "trusted", "", 0, nil},
		{"unknown property", "searchexpand {\nfoo bar\n}", "unknown property", "", 0, nil},
		{"twice", "searchexpand\nsearchexpand", "more than once", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(caddy.NewTestController("dns", tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parse(%q) error %v, want one containing %q", tt.input, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.input, err)
			}
			if s.ClusterDomain != tt.cd || s.Code != tt.code || !reflect.DeepEqual(s.Trusted, tt.trusted) {
				t.Errorf("parse(%q) = %q %d %v, want %q %d %v", tt.input, s.ClusterDomain, s.Code, s.Trusted, tt.cd, tt.code, tt.trusted)
			}
		})
	}
}

// TestSetupBounds: max_forwarded and trusted none, with clear errors for
// values that cannot be meant.
func TestSetupBounds(t *testing.T) {
	tests := []struct {
		name         string
		input        string
		wantErr      string
		maxForwarded int
		trustNone    bool
		trusted      int
	}{
		{"default bound", "searchexpand", "", DefaultMaxForwarded, false, 0},
		{"max_forwarded", "searchexpand {\nmax_forwarded 3\n}", "", 3, false, 0},
		{"max_forwarded 1", "searchexpand {\nmax_forwarded 1\n}", "", 1, false, 0},
		{"max_forwarded 32", "searchexpand {\nmax_forwarded 32\n}", "", 32, false, 0},
		{"max_forwarded last wins", "searchexpand {\nmax_forwarded 3\nmax_forwarded 4\n}", "", 4, false, 0},
		{"trusted none", "searchexpand {\ntrusted none\n}", "", DefaultMaxForwarded, true, 0},
		{"trusted none twice", "searchexpand {\ntrusted none\ntrusted none\n}", "", DefaultMaxForwarded, true, 0},
		{"trusted none with bound", "searchexpand cluster.local {\ntrusted none\nmax_forwarded 2\n}", "", 2, true, 0},

		{"max_forwarded 0", "searchexpand {\nmax_forwarded 0\n}", `max_forwarded "0": want a number of search domains, 1-32`, 0, false, 0},
		{"max_forwarded negative", "searchexpand {\nmax_forwarded -1\n}", `max_forwarded "-1"`, 0, false, 0},
		{"max_forwarded above the option's entries", "searchexpand {\nmax_forwarded 33\n}", `max_forwarded "33"`, 0, false, 0},
		{"max_forwarded not a number", "searchexpand {\nmax_forwarded six\n}", `max_forwarded "six"`, 0, false, 0},
		{"max_forwarded no arg", "searchexpand {\nmax_forwarded\n}", "Wrong argument count", 0, false, 0},
		{"max_forwarded two args", "searchexpand {\nmax_forwarded 1 2\n}", "Wrong argument count", 0, false, 0},
		{"trusted none with a prefix", "searchexpand {\ntrusted none 10.0.0.0/8\n}", "trusted: none cannot be combined with prefixes", 0, false, 0},
		{"trusted prefix then none", "searchexpand {\ntrusted 10.0.0.0/8\ntrusted none\n}", "trusted: none cannot be combined", 0, false, 0},
		{"trusted none then prefix", "searchexpand {\ntrusted none\ntrusted 10.0.0.0/8\n}", "trusted: none cannot be combined", 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(caddy.NewTestController("dns", tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parse(%q) error %v, want one containing %q", tt.input, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.input, err)
			}
			if s.MaxForwarded != tt.maxForwarded || s.TrustNone != tt.trustNone || len(s.Trusted) != tt.trusted {
				t.Errorf("parse(%q) = max_forwarded %d, trust none %v, %d prefixes; want %d, %v, %d",
					tt.input, s.MaxForwarded, s.TrustNone, len(s.Trusted), tt.maxForwarded, tt.trustNone, tt.trusted)
			}
		})
	}
}

// TestSetupRegisters runs the real setup function, which adds the handler
// to the server config.
func TestSetupRegisters(t *testing.T) {
	if err := setup(caddy.NewTestController("dns", "searchexpand {\ntrusted 10.0.0.0/8\n}")); err != nil {
		t.Fatal(err)
	}
	err := setup(caddy.NewTestController("dns", "searchexpand {\nbogus\n}"))
	if err == nil || !strings.HasPrefix(err.Error(), "plugin/searchexpand:") {
		t.Fatalf("setup error %v, want a plugin/searchexpand error", err)
	}
}

// TestSetupHostSearch: host_search lists the domains appended to the
// derived list, normalised; repeated lines add up to the option's limit.
func TestSetupHostSearch(t *testing.T) {
	for _, tt := range []struct {
		input, wantErr string
		want           []string
	}{
		{"searchexpand {\nhost_search Corp.Example. example.net\n}", "", []string{"corp.example", "example.net"}},
		{"searchexpand {\nhost_search a.example\nhost_search b.example\n}", "", []string{"a.example", "b.example"}},
		{"searchexpand {\nhost_search\n}", "Wrong argument count", nil},
		{"searchexpand {\nhost_search bad..example\n}", "host_search", nil},
		{"searchexpand {\nhost_search " + strings.Repeat("d.example ", 33) + "\n}", "host_search: at most 32 domains", nil},
	} {
		s, err := parse(caddy.NewTestController("dns", tt.input))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parse(%q) error %v, want one containing %q", tt.input, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(s.HostSearch, tt.want) {
			t.Errorf("parse(%q) = %v, %v; want %v", tt.input, s.HostSearch, err, tt.want)
		}
	}
}
