package filters

import (
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestExecBudget: an exec session takes ExecSessionConnections of the
// connection limit while it lasts, so sessions cannot use up the
// descriptors the limit keeps for etcd and DNS (issue 22 item 3).
func TestExecBudget(t *testing.T) {
	t.Parallel()
	var b ExecBudget
	if release, err := b.Acquire(); err != nil {
		t.Fatalf("no listener yet: %v", err)
	} else {
		release()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Room for 4 sessions' connections; sessions may hold half: 2.
	l, err := newConnLimitListener(ln, 4*ExecSessionConnections, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(l)
	refused := func(err error) bool {
		return apierrors.IsTooManyRequests(err) && strings.Contains(err.Error(), "each counts as 6 connections and together they may hold half of the API server's connection limit (24, --max-connections)")
	}
	l.open.Add(3) // the sessions' own connections
	first, err := b.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	if got := l.open.Load(); got != 3+2*(ExecSessionConnections-1) {
		t.Errorf("open %d with two sessions, want %d", got, 3+2*(ExecSessionConnections-1))
	}
	if _, err := b.Acquire(); !refused(err) {
		t.Fatalf("a third session: %v", err)
	}
	first()
	first() // once
	third, err := b.Acquire()
	if err != nil {
		t.Fatalf("after a session ended: %v", err)
	}
	third()
	second()
	if got := l.open.Load(); got != 3 {
		t.Errorf("open %d after every session ended, want 3 (their own connections)", got)
	}
	// Connections alone near the limit: no room for a session's share.
	l.open.Add(4*ExecSessionConnections - 3 - 2)
	if _, err := b.Acquire(); !refused(err) {
		t.Errorf("with the connections at the limit: %v", err)
	}
}
