package statuscheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// checkFunc is a Check of the test's making.
type checkFunc struct {
	name string
	f    func(ctx context.Context) (string, error)
}

func (c checkFunc) Name() string                              { return c.name }
func (c checkFunc) Check(ctx context.Context) (string, error) { return c.f(ctx) }

// TestRun: each check gets its own timeout, results keep the checks'
// order, and one that ignores its context does not hold up the report.
func TestRun(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	checks := []Check{
		checkFunc{"ok", func(context.Context) (string, error) { return "fine", nil }},
		checkFunc{"broken", func(context.Context) (string, error) { return "", errors.New("it broke") }},
		checkFunc{"stopped", func(context.Context) (string, error) { return "", fmt.Errorf("%w by the user", ErrStopped) }},
		checkFunc{"slow", func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() }},
		checkFunc{"ignores its context", func(context.Context) (string, error) { <-hang; return "late", nil }},
	}
	want := []Result{
		{Name: "ok", Status: Healthy, Message: "fine"},
		{Name: "broken", Status: Unhealthy, Message: "it broke"},
		{Name: "stopped", Status: Stopped, Message: "stopped by the user"},
		{Name: "slow", Status: Unhealthy, Message: "no answer within 200ms: context deadline exceeded"},
		{Name: "ignores its context", Status: Unhealthy, Message: "no answer within 200ms"},
	}
	start := time.Now()
	got := Run(context.Background(), checks, 200*time.Millisecond)
	if took := time.Since(start); took > time.Second {
		t.Errorf("Run took %s with a 200ms timeout", took)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"a\n b\t c\n", "a b c"},
		{strings.Repeat("x", 400), strings.Repeat("x", 300) + "…"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
