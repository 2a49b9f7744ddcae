package upctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/datadirlock"
)

type fakeNode struct {
	name string
	mu   sync.Mutex
	on   bool
}

func (n *fakeNode) Name() string { return n.name }
func (n *fakeNode) On() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.on
}
func (n *fakeNode) Set(_ context.Context, on bool) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	changed := n.on != on
	n.on = on
	return changed, nil
}

// serve runs a Server over a socket in a temp data dir until the test ends.
func serve(t *testing.T, nodes ...Node) string {
	t.Helper()
	return serveServer(t, &Server{Nodes: nodes})
}

// serveServer is serve for a Server of the test's making.
func serveServer(t *testing.T, s *Server) string {
	t.Helper()
	dir := t.TempDir()
	s.DataDir = dir
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if _, err := os.Stat(SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left behind: %v", err)
		}
	})
	return dir
}

func TestProtocol(t *testing.T) {
	t.Parallel()
	n1, n2 := &fakeNode{name: "node-1", on: true}, &fakeNode{name: "node-2", on: true}
	dir := serve(t, n1, n2)
	fi, err := os.Stat(SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("socket mode %v, want a 0600 socket", fi.Mode())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := Client{DataDir: dir}

	tests := []struct {
		name    string
		node    string
		on      bool
		want    NodeStatus
		wantErr string
	}{
		{name: "stop", node: "node-2", on: false, want: NodeStatus{Name: "node-2", Running: false, Changed: true}},
		{name: "stop again", node: "node-2", on: false, want: NodeStatus{Name: "node-2", Running: false}},
		{name: "start", node: "node-2", on: true, want: NodeStatus{Name: "node-2", Running: true, Changed: true}},
		{name: "unknown", node: "node-9", wantErr: "no node node-9; nodes: node-1, node-2"},
		{name: "a path in the name", node: "a/b", wantErr: "no node"},
	}
	for _, tt := range tests {
		got, err := c.SetNode(ctx, tt.node, tt.on)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: %v; want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	if _, err := c.SetNode(ctx, "node-1", false); err != nil {
		t.Fatal(err)
	}
	l, err := c.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Nodes) != 2 || l.Nodes[0] != (NodeStatus{Name: "node-1"}) || l.Nodes[1] != (NodeStatus{Name: "node-2", Running: true}) {
		t.Errorf("nodes %+v", l.Nodes)
	}
}

// TestNotRunning: a data dir no `up` serves says so, with a socket file
// left by a killed `up` or none at all.
func TestNotRunning(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir := t.TempDir()
	_, err := Client{DataDir: dir}.SetNode(ctx, "node-1", false)
	if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "no dnsplane up is running with data dir "+dir) {
		t.Errorf("no socket: %v", err)
	}
	stale(t, dir)
	_, err = Client{DataDir: dir}.Nodes(ctx)
	if !errors.Is(err, ErrNotRunning) {
		t.Errorf("stale socket: %v", err)
	}
}

// TestSocketMissing: an `up` that holds the data dir's lock but whose
// socket was removed, or replaced by one no one serves, is running, and the
// error says so with its pid (issue 29: status and node said no up ran).
func TestSocketMissing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir := t.TempDir()
	lock, err := datadirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Release(true) }()
	want := fmt.Sprintf("dnsplane up (pid %d) is running but its control socket %s is missing; ", os.Getpid(), SocketPath(dir))
	_, err = Client{DataDir: dir}.Nodes(ctx)
	sm, ok := errors.AsType[*SocketMissingError](err)
	if !ok || !sm.Missing || sm.PID != os.Getpid() || errors.Is(err, ErrNotRunning) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("socket removed: %v; want %q…, not ErrNotRunning", err, want)
	}
	stale(t, dir)
	_, err = Client{DataDir: dir}.Components(ctx)
	if sm, ok := errors.AsType[*SocketMissingError](err); !ok || sm.Missing || !strings.Contains(err.Error(), SocketPath(dir)+" is served by no one") {
		t.Errorf("socket replaced: %v", err)
	}
}

// stale leaves a socket file no one listens on in dir, as a killed `up`
// does.
func stale(t *testing.T, dir string) {
	t.Helper()
	ln, err := net.Listen("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
}

// TestStartReplacesStale: a socket a killed `up` left is replaced; one a
// running `up` serves is refused.
func TestStartReplacesStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stale(t, dir)
	s := &Server{DataDir: dir}
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start over a stale socket: %v", err)
	}
	defer s.ln.Close()
	err := (&Server{DataDir: dir}).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "another dnsplane up serves this data dir") {
		t.Errorf("second Start: %v", err)
	}
}

// TestComponents: GET /components is the control plane's list as is, and
// an empty list (not null) before it has one.
func TestComponents(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := []ComponentStatus{{Name: "apiserver", Running: true}, {Name: "scheduler", Error: "scheduler: lease lost"}}
	tests := []struct {
		name string
		list func() []ComponentStatus
		want []ComponentStatus
	}{
		{name: "listed", list: func() []ComponentStatus { return want }, want: want},
		{name: "none", want: []ComponentStatus{}},
	}
	for _, tt := range tests {
		dir := serveServer(t, &Server{Components: tt.list})
		got, err := Client{DataDir: dir}.Components(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(got.Components, tt.want) || got.Components == nil {
			t.Errorf("%s: %+v, want %+v", tt.name, got.Components, tt.want)
		}
	}
}
