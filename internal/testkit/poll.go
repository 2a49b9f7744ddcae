package testkit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Interval is how often Poll asks its condition: often enough that a test
// does not wait long after the condition holds, rarely enough that a
// condition making API requests does not load a server shared by parallel
// tests.
const Interval = 100 * time.Millisecond

// Poll asks cond every Interval until it reports true; after timeout the
// test fails with what and the last error cond returned. An error does not
// stop the poll: it is the reason the condition does not hold yet
// ("pod not bound", a NotFound), reported if it never does.
func Poll(t testing.TB, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	PollEvery(t, what, Interval, timeout, cond)
}

// PollEvery is Poll asking cond every interval, for conditions cheap enough
// to ask more often (in-process state) or costly enough to ask less often
// (a child process).
func PollEvery(t testing.TB, what string, interval, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	// Not t.Context(): that is cancelled before Cleanup functions run, and
	// a cleanup may poll too (for a child to exit).
	if err := Until(context.Background(), interval, timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Until is the poll of Poll, returning its failure instead of failing a
// test: for a caller that goes on (t.Errorf) or adds its own state.
//
// cond gets the poll's context, so no call outlives the timeout. A call the
// deadline cut short (its context done, or client-go's rate limiter
// refusing to wait past the deadline) does not replace the previous
// call's error: the message names what the condition last saw, not the
// deadline.
func Until(ctx context.Context, interval, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	var last error
	calls := 0
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		calls++
		if ok {
			return true, nil
		}
		if last == nil || !cutShort(ctx, err) {
			last = err
		}
		return false, nil
	})
	if err == nil {
		return nil
	}
	if last == nil {
		return fmt.Errorf("not within %v (%w; %d tries, the last without an error)", timeout, err, calls)
	}
	return fmt.Errorf("not within %v (%w; %d tries): last error: %w", timeout, err, calls, last)
}

// cutShort says whether err is the poll's deadline rather than the
// condition's answer.
func cutShort(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	if err == nil {
		return false
	}
	// golang.org/x/time/rate.Limiter.Wait, under client-go's "client rate
	// limiter Wait returned an error", refuses up front when the wait would
	// end past the context's deadline; its error wraps nothing.
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "would exceed context deadline")
}
