package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

func TestRunCompactor(t *testing.T) {
	s := New(sharedClient, "/test/"+t.Name())
	old := mustCreate(t, s, "cm/ns/a", "v1")
	mustCreate(t, s, "cm/ns/b", "v1")

	ctx, cancel := context.WithCancel(testCtx(t))
	var wg sync.WaitGroup
	// Two compactors, as two API servers would run; they must coexist.
	for range 2 {
		wg.Go(func() { RunCompactor(ctx, sharedClient, 50*time.Millisecond, nil) })
	}
	defer func() { cancel(); wg.Wait() }()

	testkit.PollEvery(t, fmt.Sprintf("revision %d compacted", old.ModRevision), 20*time.Millisecond, 10*time.Second, func(ctx context.Context) (bool, error) {
		_, err := sharedClient.Get(ctx, "/", clientv3.WithRev(old.ModRevision), clientv3.WithCountOnly())
		return errors.Is(translate(err), ErrCompacted), err
	})

	w, err := s.Watch(ctx, "cm/", old.ModRevision-1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitClosed(t, w); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch from compacted revision: err = %v, want ErrCompacted", err)
	}
}

// TestCompactorCoordination drives two compactors round by round: only the one whose
// claim nobody touched since its last round compacts, and the other takes over once
// the first stops.
func TestCompactorCoordination(t *testing.T) {
	ctx := testCtx(t)
	key := "/test/" + t.Name() + "/claim"
	a := &compactor{client: sharedClient, logger: loggerOrDiscard(nil), claimKey: key}
	b := &compactor{client: sharedClient, logger: loggerOrDiscard(nil), claimKey: key}
	round := func(c *compactor) int64 {
		t.Helper()
		rev, err := c.round(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}

	if got := round(a); got != 0 {
		t.Fatalf("a's first round compacted to %d; nothing is old enough yet", got)
	}
	if got := round(b); got != 0 {
		t.Fatalf("b compacted to %d although a holds the claim", got)
	}
	aRev := round(a)
	if aRev == 0 {
		t.Fatal("a's second round did not compact")
	}
	if got := round(b); got != 0 {
		t.Fatalf("b compacted to %d although a renewed the claim", got)
	}
	// a stops; b finds the claim untouched since its last round and takes over.
	bRev := round(b)
	if bRev <= aRev {
		t.Fatalf("b took over compacting to %d, want > %d", bRev, aRev)
	}
	if _, err := sharedClient.Get(ctx, "/", clientv3.WithRev(bRev-1)); !errors.Is(translate(err), ErrCompacted) {
		t.Fatalf("revision %d still readable after compaction to %d: %v", bRev-1, bRev, err)
	}
}
