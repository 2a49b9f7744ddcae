// Package statuscheck is `dnsplane status`: it reads the up.json of a data
// dir (internal/upstate), makes sure its `up` still runs, and checks each
// component of it, one small Check each, the way `kubectl get
// componentstatuses` and `k3s check-config` report, one line per
// component (docs/operations.md, "Status and up.json"). The command in
// cmd/dnsplane only prints what Gather returns.
package statuscheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// The statuses of a Result, in kubectl get componentstatuses' words.
const (
	Healthy   = "Healthy"
	Unhealthy = "Unhealthy"
	// Stopped is a node's agent or cache stopped with `dnsplane node
	// stop`: not healthy, but what the user asked for.
	Stopped = "Stopped"
)

// ErrStopped marks a check's error as a component stopped on purpose.
var ErrStopped = errors.New("stopped")

// Check is one line of `dnsplane status`.
type Check interface {
	// Name is the component, as the control socket's /components names
	// it where it is one of them ("cluster-dns", "agent/node-1").
	Name() string
	// Check says what it found ("ok", "Ready, lease renewed 2s ago") or
	// why the component is not healthy. It returns when ctx ends.
	Check(ctx context.Context) (string, error)
}

// Result is a Check's outcome.
type Result struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // Healthy, Unhealthy or Stopped
	Message string `json:"message"`
}

// Run runs the checks at once, each for at most timeout, and returns their
// results in order. A check that does not return in time is reported as
// such and left behind, so that Run ends within about timeout whatever a
// check does.
func Run(ctx context.Context, checks []Check, timeout time.Duration) []Result {
	results := make([]Result, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		done := make(chan Result, 1)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		go func() {
			defer cancel()
			msg, err := c.Check(cctx)
			// A socket's deadline, set from ctx's (a DNS read), may
			// fire a moment before ctx reports it.
			timedOut := cctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)
			done <- result(c.Name(), msg, err, timedOut, timeout)
		}()
		wg.Go(func() {
			t := time.NewTimer(timeout + timeout/10)
			defer t.Stop()
			select {
			case results[i] = <-done:
			case <-t.C:
				results[i] = Result{Name: c.Name(), Status: Unhealthy, Message: fmt.Sprintf("no answer within %s", timeout)}
			}
		})
	}
	wg.Wait()
	return results
}

// result is a check's outcome; timedOut says its own deadline passed
// (an error wrapping another deadline, such as the control socket's, is
// reported as it says).
func result(name, msg string, err error, timedOut bool, timeout time.Duration) Result {
	switch {
	case err == nil:
		return Result{Name: name, Status: Healthy, Message: msg}
	case errors.Is(err, ErrStopped):
		return Result{Name: name, Status: Stopped, Message: err.Error()}
	case timedOut:
		return Result{Name: name, Status: Unhealthy, Message: fmt.Sprintf("no answer within %s: %v", timeout, err)}
	default:
		return Result{Name: name, Status: Unhealthy, Message: err.Error()}
	}
}

// oneLine keeps a message to a line of the report.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
