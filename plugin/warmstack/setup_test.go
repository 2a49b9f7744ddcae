package warmstack

import (
	"runtime"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
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
