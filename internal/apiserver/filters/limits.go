package filters

import (
	"errors"
	"time"
)

// Limits bound what clients can make the API server hold: connections,
// requests in flight and time per request. The defaults are
// kube-apiserver's, so clients that behave against Kubernetes behave here.
type Limits struct {
	// MaxRequestsInflight bounds the non-mutating requests (get, list)
	// served at once; kube-apiserver's --max-requests-inflight, 400.
	// 0 = unlimited, as upstream.
	MaxRequestsInflight int
	// MaxMutatingRequestsInflight bounds the mutating requests (create,
	// update, patch, delete, deletecollection) served at once;
	// kube-apiserver's --max-mutating-requests-inflight, 200. 0 = unlimited.
	MaxMutatingRequestsInflight int
	// RequestTimeout is the deadline of every request that is not
	// long-running (watches are); kube-apiserver's --request-timeout, 60s.
	// A smaller ?timeout= on the request wins, as upstream. 0 = no deadline.
	RequestTimeout time.Duration
	// MaxConnections bounds the TCP connections the HTTPS listener keeps
	// open; connections beyond it are closed as soon as they are accepted.
	// 0 = derived from the descriptor limit (AutoMaxConnections).
	// kube-apiserver has no such limit; see connlimit.go for why we do.
	MaxConnections int
	// IdleTimeout closes keep-alive connections (HTTP/1.1 and HTTP/2) that
	// carried no request for this long; 0 = 90s, kube-apiserver's value
	// (secure_serving.go: "matches http.DefaultTransport keep-alive
	// timeout"). There is no way to turn it off: an idle connection that is
	// never closed is how descriptors ran out.
	IdleTimeout time.Duration

	// MaxListsPerUser bounds the lists (and watches' initial lists) one
	// user has served at once; more wait in that user's queue, at most
	// UserQueueLength of them for up to UserQueueWait, then get kube's 429.
	// 0 = DefaultMaxListsPerUser; negative = unlimited. See userlimits.go.
	MaxListsPerUser int
	// UserQueueLength is how many lists of one user may wait for a slot;
	// 0 = DefaultUserQueueLength. (Not a way to turn queueing off: a
	// user's lists beyond MaxListsPerUser always wait a little, as APF's.)
	UserQueueLength int
	// UserQueueWait is how long a list waits for a slot; 0 =
	// DefaultUserQueueWait.
	UserQueueWait time.Duration
	// MaxWatchesPerUser bounds the watches one user has open; 0 =
	// DefaultMaxWatchesPerUser; negative = unlimited.
	MaxWatchesPerUser int
	// WatchWriteTimeout bounds each write of a watch event: a client that
	// has not taken one event in this long is not reading, and its watch
	// is closed (it resumes from the last revision it got, as after any
	// closed watch). 0 = DefaultWatchWriteTimeout.
	WatchWriteTimeout time.Duration
}

// kube-apiserver's defaults (k8s.io/apiserver/pkg/server/options
// ServerRunOptions and secure_serving.go).
const (
	DefaultMaxRequestsInflight         = 400
	DefaultMaxMutatingRequestsInflight = 200
	DefaultRequestTimeout              = 60 * time.Second
	DefaultIdleTimeout                 = 90 * time.Second
)

// dnsplane's own per-user bounds (userlimits.go); kube-apiserver gets the
// same effect from API Priority and Fairness.
const (
	// DefaultMaxListsPerUser: 4 lists of one user at a time stream
	// at full speed, and 24 of them cost what 4 do.
	DefaultMaxListsPerUser = 4
	// DefaultUserQueueLength is APF's default queue length limit (50).
	DefaultUserQueueLength = 50
	// DefaultUserQueueWait is APF's longest wait in a queue: a quarter of
	// the 60s request timeout (k8s.io/apiserver's requestWaitLimit).
	DefaultUserQueueWait = 15 * time.Second
	// DefaultMaxWatchesPerUser is far above what a client needs (an
	// informer per resource it follows) and far below the 5,000 watches
	// one user opened in issue 29's probe.
	DefaultMaxWatchesPerUser = 500
	// DefaultWatchWriteTimeout: a watch event is at most a few MiB; a
	// client that has not taken it in 10s has stopped reading.
	DefaultWatchWriteTimeout = 10 * time.Second
)

// WatchWriteTimeoutOrDefault is WatchWriteTimeout, or
// DefaultWatchWriteTimeout when it is not set: what the watch handler
// gives each event's write.
func (l Limits) WatchWriteTimeoutOrDefault() time.Duration {
	if l.WatchWriteTimeout <= 0 {
		return DefaultWatchWriteTimeout
	}
	return l.WatchWriteTimeout
}

// DefaultLimits are kube-apiserver's defaults, with the connection limit
// derived from the descriptor limit.
func DefaultLimits() Limits {
	return Limits{
		MaxRequestsInflight:         DefaultMaxRequestsInflight,
		MaxMutatingRequestsInflight: DefaultMaxMutatingRequestsInflight,
		RequestTimeout:              DefaultRequestTimeout,
		IdleTimeout:                 DefaultIdleTimeout,
	}
}

// Validate rejects negative limits; kube-apiserver rejects them too
// ("--max-requests-inflight can not be negative value").
func (l Limits) Validate() error {
	var errs []error
	if l.MaxRequestsInflight < 0 {
		errs = append(errs, errors.New("--max-requests-inflight can not be negative value"))
	}
	if l.MaxMutatingRequestsInflight < 0 {
		errs = append(errs, errors.New("--max-mutating-requests-inflight can not be negative value"))
	}
	if l.RequestTimeout < 0 {
		errs = append(errs, errors.New("--request-timeout can not be negative value"))
	}
	if l.MaxConnections < 0 {
		errs = append(errs, errors.New("--max-connections can not be negative value"))
	}
	if l.IdleTimeout < 0 {
		errs = append(errs, errors.New("the idle timeout can not be negative"))
	}
	if l.UserQueueLength < 0 {
		errs = append(errs, errors.New("the per-user queue length can not be negative"))
	}
	if l.UserQueueWait < 0 {
		errs = append(errs, errors.New("the per-user queue wait can not be negative"))
	}
	if l.WatchWriteTimeout < 0 {
		errs = append(errs, errors.New("the watch write timeout can not be negative"))
	}
	return errors.Join(errs...)
}
