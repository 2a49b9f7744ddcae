package nodepower

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// fakeComponent counts its starts and knows whether it runs.
type fakeComponent struct {
	mu       sync.Mutex
	starts   int
	running  bool
	startErr error
	runErr   chan error // a value ends Run with it
}

func (f *fakeComponent) Name() string { return "fake" }

func (f *fakeComponent) Start(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	return f.startErr
}

func (f *fakeComponent) Run(ctx context.Context) error {
	f.mu.Lock()
	f.running = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running = false
		f.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return nil
	case err := <-f.runErr:
		return err
	}
}

func (f *fakeComponent) state() (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts, f.running
}

// waitFor polls cond, in-process state, for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.PollEvery(t, what, time.Millisecond, 5*time.Second, func(context.Context) (bool, error) { return cond(), nil })
}

// TestGate: a gated component starts with the control plane, is stopped
// (and Set returns only then) when its node is switched off, and starts
// again when it is switched back on.
func TestGate(t *testing.T) {
	t.Parallel()
	sw := New("node-2")
	f1, f2 := &fakeComponent{runErr: make(chan error)}, &fakeComponent{runErr: make(chan error)}
	g1, g2 := sw.Gate(f1), sw.Gate(f2)
	if g1.Name() != "fake" {
		t.Errorf("name %q", g1.Name())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	for _, g := range []interface {
		Start(context.Context) error
		Run(context.Context) error
	}{g1.(*gated), g2.(*gated)} {
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		go func() { done <- g.Run(ctx) }()
	}
	waitFor(t, "both run", func() bool {
		s1, r1 := f1.state()
		s2, r2 := f2.state()
		return s1 == 1 && r1 && s2 == 1 && r2
	})

	changed, err := sw.Set(ctx, false)
	if err != nil || !changed {
		t.Fatalf("Set(off) = %v, %v", changed, err)
	}
	// Set(off) returned: neither may still run.
	if _, r := f1.state(); r {
		t.Error("f1 runs after Set(off) returned")
	}
	if _, r := f2.state(); r {
		t.Error("f2 runs after Set(off) returned")
	}
	if sw.On() {
		t.Error("On after Set(off)")
	}
	if changed, _ := sw.Set(ctx, false); changed {
		t.Error("a second Set(off) changed something")
	}

	if changed, err := sw.Set(ctx, true); err != nil || !changed {
		t.Fatalf("Set(on) = %v, %v", changed, err)
	}
	waitFor(t, "both run again, started once more", func() bool {
		s1, r1 := f1.state()
		s2, r2 := f2.state()
		return s1 == 2 && r1 && s2 == 2 && r2
	})

	cancel()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// TestGateFailure: a component failing while its node is on fails the
// control plane, as an ungated one would; a node off at start starts
// nothing until switched on.
func TestGateFailure(t *testing.T) {
	t.Parallel()
	sw := New("node-1")
	if _, err := sw.Set(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	f := &fakeComponent{runErr: make(chan error, 1)}
	g := sw.Gate(f).(*gated)
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(context.Background()) }()
	if s, _ := f.state(); s != 0 {
		t.Errorf("started %d times while off", s)
	}
	if _, err := sw.Set(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "runs once on", func() bool { _, r := f.state(); return r })
	boom := errors.New("boom")
	f.runErr <- boom
	if err := <-done; !errors.Is(err, boom) {
		t.Errorf("Run = %v, want %v", err, boom)
	}

	f2 := &fakeComponent{startErr: boom}
	if err := New("node-3").Gate(f2).(*gated).Start(context.Background()); !errors.Is(err, boom) {
		t.Errorf("Start = %v, want %v", err, boom)
	}
}

// TestSetOffTimesOut: Set(off) gives up with ctx when a component does not
// stop.
func TestSetOffTimesOut(t *testing.T) {
	t.Parallel()
	sw := New("node-1")
	sw.begin() // a component that never stops
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := sw.Set(ctx, false); err == nil {
		t.Error("Set(off) returned without the component stopping")
	}
	sw.end()
}
