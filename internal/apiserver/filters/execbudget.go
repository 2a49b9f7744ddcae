package filters

import (
	"fmt"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ExecSessionConnections is what an exec session counts for against the
// connection limit (Limits.MaxConnections), its client's connection
// included. A session holds more descriptors than a request: its client's
// connection, the connection to the node agent (two with kubectl's
// WebSocket, which is translated to SPDY) and, where the agent runs in the
// same process (`up`), the agent's end of it, the command's stdout, stderr
// and stdin pipes and its pidfd: about 7. Counting it as one let 60
// sessions use up a 400-descriptor process and take DNS down with it
// (issue 22 item 3); counted as 6 (the client's connection plus 5), the
// connection budget, which keeps max(128, nofile/4) descriptors for etcd
// and DNS, holds.
const ExecSessionConnections = 6

// ExecBudget takes exec sessions' share of the connection limit from the
// HTTPS listener's count, once Attach gave it one: before, and for servers
// driven through their handler alone, sessions are not limited. The zero
// value is ready to use. Sessions may
// hold at most half of the limit, so that however many are opened, other
// clients (the cluster DNS's watch, controllers, kubectl get) can still
// connect.
type ExecBudget struct {
	l        atomic.Pointer[ConnLimitListener]
	sessions atomic.Int64
}

// Attach makes sessions count against l's connections from now on.
func (b *ExecBudget) Attach(l *ConnLimitListener) { b.l.Store(l) }

// Acquire counts a session against the limit, or answers kube's 429 when
// it does not fit; release gives its share back, once.
func (b *ExecBudget) Acquire() (release func(), err error) {
	l := b.l.Load()
	if l == nil {
		return func() {}, nil
	}
	const extra = ExecSessionConnections - 1 // its own connection counts already
	if b.sessions.Add(1)*ExecSessionConnections > l.limit/2 {
		b.sessions.Add(-1)
		return nil, b.refuse(l)
	}
	if l.open.Add(extra) > l.limit {
		l.open.Add(-extra)
		b.sessions.Add(-1)
		return nil, b.refuse(l)
	}
	return sync.OnceFunc(func() {
		l.open.Add(-extra)
		b.sessions.Add(-1)
	}), nil
}

func (b *ExecBudget) refuse(l *ConnLimitListener) error {
	l.rejected.Inc()
	return apierrors.NewTooManyRequests(fmt.Sprintf(
		"too many exec sessions: each counts as %d connections and together they may hold half of the API server's connection limit (%d, --max-connections); close sessions or retry later",
		ExecSessionConnections, l.limit), 1)
}
