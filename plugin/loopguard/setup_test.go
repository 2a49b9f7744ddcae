package loopguard

import (
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

func TestSetup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input   string
		wantErr string
		code    uint16
		hops    int
	}{
		{"loopguard", "", DefaultCode, DefaultMaxHops},
		{"loopguard {\n}", "", DefaultCode, DefaultMaxHops},
		{"loopguard {\ncode 65001\nmax_hops 2\n}", "", 65001, 2},
		{"loopguard {\nmax_hops 64\n}", "", DefaultCode, 64},
		{"loopguard {\ncode 65534\n}", "autopath", 0, 0},
		{"loopguard {\ncode 12\n}", "65001-65534", 0, 0},
		{"loopguard {\nmax_hops 0\n}", "max_hops", 0, 0},
		{"loopguard {\nmax_hops 65\n}", "max_hops", 0, 0},
		{"loopguard {\nmax_hops\n}", "Wrong argument count", 0, 0},
		{"loopguard {\nfoo 1\n}", "unknown property", 0, 0},
		{"loopguard 1", "Wrong argument count", 0, 0},
		{"loopguard\nloopguard", "more than once", 0, 0},
	}
	for _, tc := range tests {
		g, err := parse(caddy.NewTestController("dns", tc.input))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", tc.input, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.input, err)
			continue
		}
		if g.Code != tc.code || g.MaxHops != tc.hops {
			t.Errorf("%q: code %d max_hops %d, want %d %d", tc.input, g.Code, g.MaxHops, tc.code, tc.hops)
		}
	}
}

// TestSetupRandomID: each instance gets its own ID.
func TestSetupRandomID(t *testing.T) {
	t.Parallel()
	var ids []ID
	for range 2 {
		c := caddy.NewTestController("dns", "loopguard")
		if err := setup(c); err != nil {
			t.Fatal(err)
		}
		h := dnsserver.GetConfig(c).Handler(pluginName)
		if h == nil {
			// Handlers are built at server start; take it from the chain.
			p := dnsserver.GetConfig(c).Plugin
			h = p[len(p)-1](nil)
		}
		ids = append(ids, h.(*LoopGuard).ID)
	}
	if ids[0] == ids[1] || ids[0] == (ID{}) {
		t.Errorf("IDs %x and %x", ids[0], ids[1])
	}
}
