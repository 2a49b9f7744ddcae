package operator

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExecCheckerVerdicts: only a child that ran CoreDNS's setup and
// exited ExitCorefileRejected with a reason rejects the Corefile; a child
// that cannot start, is killed, times out or crashes gives no verdict.
func TestExecCheckerVerdicts(t *testing.T) {
	t.Parallel()
	dry := dryLoadChecker(t)
	tests := []struct {
		name    string
		checker ExecChecker
		input   string
		// want is "" (loads), "corefile" or "dryload".
		want, wantMsg string
	}{
		{"loads", dry, ".:5353 {\n    forward . 127.0.0.1:53\n}\n", "", ""},
		{"a bad Corefile", dry, ".:5353 {\n    forward . not-an-address\n}\n", "corefile", "Corefile does not load"},
		{"an unknown plugin", dry, ".:5353 {\n    policy round_robin\n}\n", "corefile", "Unknown directive 'policy'"},
		{"the child cannot start", ExecChecker{Path: filepath.Join(t.TempDir(), "no-such-dnsplane")}, ".:5353 {\n}\n", "dryload", "no such file"},
		{"the child is killed", ExecChecker{Path: "/bin/sh", Args: []string{"-c", "kill -KILL $$"}}, "", "dryload", "signal: killed"},
		{"the child times out", ExecChecker{Path: "/bin/sh", Args: []string{"-c", "exec sleep 30"}, Timeout: 50 * time.Millisecond}, "", "dryload", "was stopped after 50ms"},
		{"the child crashes", ExecChecker{Path: "/bin/sh", Args: []string{"-c", "echo 'fatal error: out of memory' >&2; exit 2"}}, "", "dryload", "exit status 2: fatal error: out of memory"},
		{"exit 1 without a reason", ExecChecker{Path: "/bin/sh", Args: []string{"-c", "exit 1"}}, "", "dryload", "exit status 1"},
		{"exit 1 with a reason", ExecChecker{Path: "/bin/sh", Args: []string{"-c", "echo 'error: Corefile:2 - Error during parsing: x' >&2; exit 1"}}, "", "corefile", "Corefile:2 - Error during parsing: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.checker.Check(context.Background(), []byte(tt.input))
			var dle *DryLoadError
			switch tt.want {
			case "":
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			case "corefile":
				if !IsCorefileError(err) || errors.As(err, &dle) {
					t.Fatalf("Check = %#v, want a CorefileError", err)
				}
				if strings.HasPrefix(err.Error(), "error: ") {
					t.Errorf("Check = %q keeps the child's prefix", err)
				}
			case "dryload":
				if IsCorefileError(err) || !errors.As(err, &dle) {
					t.Fatalf("Check = %#v, want a DryLoadError", err)
				}
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Check = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestExecCheckerCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := ExecChecker{Path: "/bin/sh", Args: []string{"-c", "exec sleep 30"}}.Check(ctx, nil)
	if !errors.Is(err, context.Canceled) || IsCorefileError(err) {
		t.Fatalf("Check = %v, want context.Canceled and no verdict", err)
	}
}

func TestTruncateChildMessage(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxChildMessage) // 2 bytes each
	got := truncate(long, maxChildMessage)
	if len(got) > maxChildMessage+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Fatalf("truncate = %d bytes %q…", len(got), got[:8])
	}
	if got := truncate("short", 10); got != "short" {
		t.Fatalf("truncate(short) = %q", got)
	}
}
