package scheduler_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/scheduler"
)

// TestRunWithoutAPIServer: a kubeconfig that cannot be read is an error;
// an API server that never answers leaves Run waiting for its informers
// until ctx ends, and then it returns nil, its goroutines stopped.
func TestRunWithoutAPIServer(t *testing.T) {
	t.Parallel()
	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	// Port 1 on loopback: connections are refused at once.
	if err := os.WriteFile(unreachable, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		kubeconfig  string
		leaderElect bool
		wantErr     string
	}{
		{"missing kubeconfig", filepath.Join(t.TempDir(), "nope"), false, "nope"},
		{"unreachable", unreachable, false, ""},
		{"unreachable, leader elect", unreachable, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- (&scheduler.Scheduler{Kubeconfig: tt.kubeconfig, LeaderElect: tt.leaderElect, Logger: testLogger(t)}).Run(ctx)
			}()
			select {
			case err := <-done:
				switch {
				case tt.wantErr == "" && err != nil:
					t.Errorf("Run: %v; want nil once ctx ended", err)
				case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
					t.Errorf("Run: %v; want an error with %q", err, tt.wantErr)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return within 30s of its context ending")
			}
		})
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	if got := (&scheduler.Scheduler{}).Name(); got != "scheduler" {
		t.Errorf("Name() = %q", got)
	}
}
