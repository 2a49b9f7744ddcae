// Package nodepower is the power switch of a node `dnsplane up` runs:
// `dnsplane node stop NAME` turns a node's components (its node agent and
// its node cache) off as if its machine went away, and `node start` turns
// them back on (docs/nodes.md). A Switch is shared by the components of one
// node; Gate wraps each so that it runs only while the switch is on.
package nodepower

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dnsplane/dnsplane/internal/controlplane"
)

// Switch is one node's power. The zero value is not usable; use New.
type Switch struct {
	name string

	mu sync.Mutex
	on bool
	// changed is closed and replaced on every flip, so that any number of
	// gated components can wait for the next one.
	changed chan struct{}
	// running counts gated components whose Run is between a start and
	// its stop; off waits for it to drop to zero.
	running int
	idle    chan struct{} // closed and replaced whenever running drops to 0
}

// New returns the switch of the node name, on.
func New(name string) *Switch {
	return &Switch{name: name, on: true, changed: make(chan struct{}), idle: make(chan struct{})}
}

// Name is the node's name.
func (s *Switch) Name() string { return s.name }

// On says whether the node runs.
func (s *Switch) On() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on
}

// Set turns the node on or off. Turning it off returns once every gated
// component has stopped (or ctx ends); turning it on returns at once, the
// components starting in the background. It reports whether the state
// changed.
func (s *Switch) Set(ctx context.Context, on bool) (bool, error) {
	s.mu.Lock()
	changed := s.on != on
	if changed {
		s.on = on
		close(s.changed)
		s.changed = make(chan struct{})
	}
	for !on && s.running > 0 {
		idle := s.idle
		s.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return changed, fmt.Errorf("stopping node %s: %w", s.name, context.Cause(ctx))
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return changed, nil
}

// state is the switch's position and the channel that closes when it
// next changes.
func (s *Switch) state() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on, s.changed
}

func (s *Switch) begin() {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
}

func (s *Switch) end() {
	s.mu.Lock()
	s.running--
	if s.running == 0 {
		close(s.idle)
		s.idle = make(chan struct{})
	}
	s.mu.Unlock()
}

// Gate returns c run only while s is on: it starts with the control plane
// (Starter) when s is on, stops when s turns off, and starts again (Start,
// then Run) when s turns back on. c must support being started again after
// its Run returned.
func (s *Switch) Gate(c controlplane.Component) controlplane.Component {
	return &gated{sw: s, c: c}
}

type gated struct {
	sw *Switch
	c  controlplane.Component
	// started says the control plane's Start already started c.
	started bool
}

func (g *gated) Name() string { return g.c.Name() }

// Start starts c in the control plane's order, unless the node is off.
func (g *gated) Start(ctx context.Context) error {
	if on, _ := g.sw.state(); !on {
		return nil
	}
	if err := start(ctx, g.c); err != nil {
		return err
	}
	g.started = true
	return nil
}

// Run runs c while the switch is on, until ctx ends. An error of c while it
// should run ends the control plane, as any component's would.
func (g *gated) Run(ctx context.Context) error {
	for {
		on, changed := g.sw.state()
		if !on {
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
				continue
			}
		}
		if err := g.runOnce(ctx, changed); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// runOnce starts c (unless Start did) and runs it until ctx ends or the
// switch changes.
func (g *gated) runOnce(ctx context.Context, changed <-chan struct{}) error {
	g.sw.begin()
	defer g.sw.end()
	if !g.started {
		if err := start(ctx, g.c); err != nil {
			return err
		}
	}
	g.started = false
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.c.Run(runCtx) }()
	select {
	case err := <-done:
		if err == nil && ctx.Err() == nil {
			err = errors.New("stopped by itself")
		}
		return err
	case <-ctx.Done():
	case <-changed:
	}
	cancel()
	return <-done
}

func start(ctx context.Context, c controlplane.Component) error {
	if s, ok := c.(controlplane.Starter); ok {
		return s.Start(ctx)
	}
	return nil
}
