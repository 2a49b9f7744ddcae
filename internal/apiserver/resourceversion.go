package apiserver

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// defaultResourceVersionWait is how long kube-apiserver's watch cache blocks
// a read whose resourceVersion it has not reached yet (blockTimeout) before
// answering 504.
const defaultResourceVersionWait = 3 * time.Second

// queryResourceVersion parses the resourceVersion parameter of a get, list or
// watch; 0 when absent or "0". Anything but a non-negative integer is a 400
// naming the parameter, in the words kube's etcd storage uses for it (its
// watch cache lets the same mistake escape as a 500).
func queryResourceVersion(q url.Values) (int64, error) {
	rv := q.Get("resourceVersion")
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err == nil && n > math.MaxInt64 {
		// etcd revisions are int64: no server ever handed this out.
		err = fmt.Errorf("larger than any etcd revision (%d)", int64(math.MaxInt64))
	}
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v",
			field.Invalid(field.NewPath("resourceVersion"), rv, err.Error())))
	}
	return int64(n), nil
}

// errTooLargeResourceVersion is kube-apiserver's answer for a read at a
// resourceVersion storage has not reached: 504 Timeout with the
// ResourceVersionTooLarge cause, which client-go's reflector recognises (it
// then lists again from the latest revision), and a Retry-After.
func errTooLargeResourceVersion(rv, current int64) *apierrors.StatusError {
	return store.TooLargeResourceVersion(fmt.Sprintf("Too large resource version: %d, current: %d", rv, current))
}

// waitForRevision returns once etcd's revision is at least rv, so a read
// served afterwards reflects everything up to rv. A client may legitimately
// hold a revision this server has not seen yet (another API server on a
// lagging etcd member handed it out), so the read waits for it, as
// kube-apiserver does; a revision that does not appear within
// Config.ResourceVersionWait gets errTooLargeResourceVersion rather than a
// result older than the client asked for, or a watch that silently skips to
// a revision that may never come.
//
// It polls CurrentRevision instead of watching: any write anywhere in etcd
// moves the revision, including writes under other prefixes that a watch on
// ours would not see. The polls back off, so a long wait costs a few dozen
// reads. It gives up with the context's error when ctx ends.
func (s *Server) waitForRevision(ctx context.Context, rv int64) error {
	if rv <= 0 {
		return nil
	}
	deadline := time.Now().Add(s.cfg.ResourceVersionWait)
	delay := 10 * time.Millisecond
	for {
		current, err := s.storage.CurrentRevision(ctx)
		if err != nil {
			return fmt.Errorf("waiting for resource version %d: %w", rv, err)
		}
		if current >= rv {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return errTooLargeResourceVersion(rv, current)
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for resource version %d: %w", rv, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
}
