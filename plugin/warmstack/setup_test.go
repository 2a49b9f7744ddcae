package warmstack

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
)

func TestSetup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input   string
		workers int
		wantErr string
	}{
		{"warmstack", max(MinWorkers, DefaultWorkers*runtime.GOMAXPROCS(0)), ""},
		{"warmstack 4", 4, ""},
		{"warmstack 1024", 1024, ""},
		{"warmstack 0", 0, "want 1-1024"},
		{"warmstack 1025", 0, "want 1-1024"},
		{"warmstack x", 0, "want 1-1024"},
		{"warmstack 1 2", 0, "Wrong argument count"},
		{"warmstack\nwarmstack", 0, "specified more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			t.Parallel()
			c := caddy.NewTestController("dns", tt.input)
			err := setup(c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("setup(%q) = %v, want an error containing %q", tt.input, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("setup(%q): %v", tt.input, err)
			}
			plugins := dnsserver.GetConfig(c).Plugin
			if len(plugins) != 1 {
				t.Fatalf("%d plugins added, want 1", len(plugins))
			}
			h, ok := plugins[0](nil).(*WarmStack)
			if !ok {
				t.Fatalf("handler is %T", plugins[0](nil))
			}
			if h.Workers != tt.workers {
				t.Errorf("workers = %d, want %d", h.Workers, tt.workers)
			}
		})
	}
}

type handlers []plugin.Handler

func (h handlers) Handlers() []plugin.Handler { return h }

// Behind LeanChain handlers or fewer warmstack leaves itself out of the
// chain; behind more it is there, with the Corefile's chooser.
func TestWrapLeavesLeanChainsAlone(t *testing.T) {
	t.Parallel()
	next := test.HandlerFunc(func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) { return dns.RcodeSuccess, nil })
	ch := newChooser()
	for _, tt := range []struct {
		name   string
		next   plugin.Handler
		after  int
		wantIn bool
	}{
		{"lean chain (template, cache, forward)", next, LeanChain, false},
		{"one plugin", next, 1, false},
		{"the node cache's chain", next, 5, true},
		{"no next plugin", nil, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := wrap(make(handlers, tt.after), tt.next, 4, ch)
			ws, in := h.(*WarmStack)
			if in != tt.wantIn {
				t.Fatalf("warmstack in the chain: %v, want %v", in, tt.wantIn)
			}
			if in && ws.choose != ch {
				t.Error("warmstack without the Corefile's chooser")
			}
		})
	}
}
