// Package etcdproc runs the embedded etcd in a supervised child process.
//
// In one process, etcd's failures are the process's: on a full disk it fails
// a commit and exits, on too many open files it calls Fatal, and on a damaged
// database it panics in a goroutine no recover reaches. `dnsplane up` also
// serves cluster DNS, which must keep answering through an API outage as it
// does in a real cluster. So the parent starts the same binary as an etcd
// member (RunMember), talks to it over loopback, and restarts it with backoff
// when it dies (Supervisor); the DNS roles keep answering from their caches
// meanwhile. See docs/architecture.md and docs/operations.md.
//
// The child reports to the parent with one JSON object per line on its
// stdout (message), and logs JSON (log/slog) on its stderr. It stops only
// when its stdin closes, which is how the parent stops it and what happens
// when the parent dies: a Ctrl-C in a terminal, or systemd's SIGTERM to the
// whole cgroup, reaches the child too, and stopping on those would race the
// parent's orderly shutdown (the API server first, etcd last).
package etcdproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// message is one line of the child's stdout.
type message struct {
	// Phase is the start-up phase the child entered (storage.Phase*).
	Phase string `json:"phase,omitempty"`
	// Endpoints, once set, say the member is ready and where it serves.
	Endpoints []string `json:"endpoints,omitempty"`
	// Error is why the member failed; the child exits after sending it.
	Error string `json:"error,omitempty"`
	// Damaged is set when Error is a damaged data dir
	// (storage.DamagedError): restarting will not help.
	Damaged *damaged `json:"damaged,omitempty"`
}

type damaged struct {
	Part   string `json:"part"`
	Detail string `json:"detail"`
}

// MemberTLS are the certificate files RunMember serves with, as the hidden
// etcd-member command's flags (Flag*) name them.
type MemberTLS = storage.EmbeddedTLS

// RunMember runs one embedded etcd member in dataDir for a supervising
// parent: it reports its phases and readiness on stdout and serves until ctx
// ends, stdin reaches EOF (the parent is gone) or etcd fails. It is what the
// hidden `dnsplane etcd-member` command runs. tls are the member's
// certificates (the parent made them; the member never sees the client
// certificate).
func RunMember(ctx context.Context, dataDir string, tls storage.EmbeddedTLS, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	send := func(m message) {
		mu.Lock()
		defer mu.Unlock()
		// The parent reads these lines; if it is gone, stdin's EOF ends us.
		_ = enc.Encode(m)
	}
	fail := func(err error) error {
		m := message{Error: err.Error()}
		var de *storage.DamagedError
		if errors.As(err, &de) {
			m.Damaged = &damaged{Part: de.Part, Detail: de.Detail}
		}
		send(m)
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// Nothing is ever written to stdin: a read returns only when the
		// parent closes its end or dies.
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()

	emb, err := storage.StartEmbedded(ctx, dataDir, logger, storage.WithTLS(tls),
		storage.WithPageCheck(), storage.WithPhases(func(p string) { send(message{Phase: p}) }))
	if err != nil {
		return fail(err)
	}
	defer emb.Close()
	send(message{Endpoints: emb.Endpoints()})

	select {
	case <-ctx.Done():
		return nil
	case err := <-emb.Err():
		return fail(fmt.Errorf("etcd stopped: %w", err))
	}
}
