package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

func (l Limits) watchWriteTimeout() time.Duration {
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

// limitsOrDefault is *l, or DefaultLimits() when l is nil.
func limitsOrDefault(l *Limits) Limits {
	if l == nil {
		return DefaultLimits()
	}
	return *l
}

// longRunningVerbs and longRunningSubresources are what kube-apiserver's
// BasicLongRunningRequestCheck is configured with
// (cmd/kube-apiserver/app/server.go): such requests have no deadline and do
// not count against max-in-flight, because they are meant to stay open. Of
// these we serve only watch; the others are listed so a future handler for
// them is treated as upstream treats it.
var (
	longRunningVerbs        = map[string]bool{"watch": true, "proxy": true}
	longRunningSubresources = map[string]bool{"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true}
)

// isLongRunning reports what kube's long-running check would for r. It
// avoids parsing the URL unless the request can be long-running (a query
// naming watch, a last path segment naming a long-running subresource), so
// the common request pays only a few string scans.
func isLongRunning(r *http.Request) bool {
	if !strings.Contains(r.URL.RawQuery, "watch") && !hasLongRunningTail(r.URL.Path) {
		return false
	}
	info, ok := parseResourcePath(r)
	return ok && (longRunningVerbs[info.Verb] || longRunningSubresources[info.Subresource])
}

// hasLongRunningTail reports whether the last segment of path names a
// long-running subresource (it may also be an object's name; the caller
// parses the path to tell).
func hasLongRunningTail(path string) bool {
	return longRunningSubresources[path[strings.LastIndexByte(path, '/')+1:]]
}

// isMutating follows kube's max-in-flight filter: get, list and watch
// (GET and HEAD, for resources and other paths alike) are read-only,
// everything else mutates.
func isMutating(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}

// isProbe reports the probe paths, which are exempt from max-in-flight when
// read, as kube-apiserver's default API Priority and Fairness configuration
// exempts them (the "probes" FlowSchema sends get of /healthz, /livez and
// /readyz to the "exempt" priority level): a liveness probe rejected
// because the server is busy would get a busy server restarted. They are
// cheap, and still bounded by the request deadline and the connection
// limit.
func isProbe(path string) bool {
	return path == "/healthz" || path == "/livez" || path == "/readyz"
}

// inflightMetrics are kube-apiserver's max-in-flight metrics, under its
// names and labels.
type inflightMetrics struct {
	current *prometheus.GaugeVec
	dropped *prometheus.CounterVec
}

const (
	readOnlyKind = "readOnly"
	mutatingKind = "mutating"
)

func newInflightMetrics(reg prometheus.Registerer) (*inflightMetrics, error) {
	m := &inflightMetrics{
		current: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Number of requests currently being served, by request kind (readOnly or mutating); long-running requests and probes are not counted.",
		}, []string{"request_kind"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_dropped_requests_total",
			Help: "Number of requests answered 429 because the max-in-flight limit of their kind was reached.",
		}, []string{"request_kind"}),
	}
	for _, c := range []prometheus.Collector{m.current, m.dropped} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering in-flight metrics: %w", err)
		}
	}
	// Export both kinds from the start, as zero.
	for _, kind := range []string{readOnlyKind, mutatingKind} {
		m.current.WithLabelValues(kind)
		m.dropped.WithLabelValues(kind)
	}
	return m, nil
}

// inflightPool is one of the two max-in-flight semaphores.
type inflightPool struct {
	slots   chan struct{} // nil = unlimited
	current prometheus.Gauge
	dropped prometheus.Counter
}

func newInflightPool(limit int, m *inflightMetrics, kind string) inflightPool {
	p := inflightPool{current: m.current.WithLabelValues(kind), dropped: m.dropped.WithLabelValues(kind)}
	if limit > 0 {
		p.slots = make(chan struct{}, limit)
	}
	return p
}

// retryAfter is kube-apiserver's Retry-After for a 429 from max-in-flight
// (maxinflight.go); client-go waits that long and retries on its own.
const retryAfter = "1"

// tooManyRequestsMessage is kube-apiserver's body for that 429, sent like
// upstream as text/plain (not a Status): client-go turns it into a
// TooManyRequests error and retries.
const tooManyRequestsMessage = "Too many requests, please try again later."

// withMaxInFlight is kube-apiserver's --max-requests-inflight and
// --max-mutating-requests-inflight filter: a request that finds its pool
// full is answered 429 at once (it does not wait), long-running requests
// and probes are not counted.
//
// Unlike upstream we do not exempt users in system:masters: dnsplane has no
// authorization and no per-component identities yet, so the admin
// credential (in system:masters) is what kubectl, the cluster DNS and every
// other role use; exempting it would exempt nearly all traffic. Upstream
// exempts it so a super-admin can always get in during an overload; here
// client-go's automatic retry on 429 serves that purpose.
func withMaxInFlight(next http.Handler, readOnly, mutating inflightPool) http.Handler {
	if readOnly.slots == nil && mutating.slots == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pool, probe := &readOnly, isProbe(r.URL.Path)
		if isMutating(r) {
			pool, probe = &mutating, false // the probes FlowSchema matches only get
		}
		if pool.slots == nil || probe || isLongRunning(r) {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case pool.slots <- struct{}{}:
		default:
			pool.dropped.Inc()
			w.Header().Set("Retry-After", retryAfter)
			http.Error(w, tooManyRequestsMessage, http.StatusTooManyRequests)
			return
		}
		pool.current.Inc()
		defer func() {
			<-pool.slots
			pool.current.Dec()
		}()
		next.ServeHTTP(w, r)
	})
}

// invalidTimeoutInURL is kube-apiserver's 400 message prefix for a ?timeout=
// that does not parse (request_deadline.go).
const invalidTimeoutInURL = "invalid timeout specified in the request URL"

// requestTimeout is the deadline of r: limit, or the request's ?timeout= when
// it is positive and smaller, as kube-apiserver's WithRequestDeadline does
// (0 or a larger value keep the server's maximum).
func requestTimeout(r *http.Request, limit time.Duration) (time.Duration, *apierrors.StatusError) {
	if !strings.Contains(r.URL.RawQuery, "timeout=") {
		return limit, nil
	}
	value := r.URL.Query().Get("timeout")
	if value == "" {
		return limit, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("%s - %s", invalidTimeoutInURL, err.Error()))
	}
	if d > 0 && d < limit {
		return d, nil
	}
	return limit, nil
}

// withRequestDeadline gives every request that is not long-running a
// deadline, as kube-apiserver's WithRequestDeadline: --request-timeout, or a
// smaller ?timeout=. Handlers stop at the deadline because everything they
// wait on (etcd, the request body) honours it:
//
//   - the context carries the deadline, which etcd calls observe;
//   - the connection's read deadline is set to it, so a client that sends
//     its body slowly cannot hold the handler (and an in-flight slot)
//     longer.
//
// This is the synchronous design of KEP-4460 (PerHandlerReadWriteTimeout):
// no goroutine per request, as upstream's older timeout filter needs, and
// no response written behind a still-running handler's back. The handler's
// own error after the deadline is what the client gets; deadlineWriter
// makes that error kube's 504 whatever path noticed the deadline first (an
// etcd call, a body read, an IP allocation). Watches keep their own
// timeoutSeconds.
func withRequestDeadline(next http.Handler, limit time.Duration) http.Handler {
	if limit <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isLongRunning(r) {
			next.ServeHTTP(w, r)
			return
		}
		timeout, bad := requestTimeout(r, limit)
		if bad != nil {
			s := statusFor(bad)
			writeJSON(w, int(s.Code), s)
			return
		}
		deadline := time.Now().Add(timeout)
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		if r.ContentLength != 0 {
			// Best effort: httptest recorders cannot, and a hijacked or
			// closed connection has nothing left to bound.
			_ = http.NewResponseController(w).SetReadDeadline(deadline)
		}
		dw := &deadlineWriter{ResponseWriter: w, deadline: deadline}
		next.ServeHTTP(dw, r.WithContext(ctx))
	})
}

// deadlineWriter turns an error response written at or after the deadline
// into kube's 504 Timeout: whatever failed then failed because the time ran
// out (a cancelled etcd call, a body read cut off by the read deadline),
// and the client should hear that, not the symptom. Success responses pass
// through unchanged, even late ones.
type deadlineWriter struct {
	http.ResponseWriter
	deadline    time.Time
	wroteHeader bool
	replaced    bool // the handler's body is dropped: a 504 was sent instead
}

func (d *deadlineWriter) WriteHeader(code int) {
	if d.wroteHeader {
		if !d.replaced {
			d.ResponseWriter.WriteHeader(code)
		}
		return
	}
	d.wroteHeader = true
	if code >= http.StatusBadRequest && code != http.StatusGatewayTimeout && !time.Now().Before(d.deadline) {
		d.replaced = true
		h := d.Header()
		h.Del("Content-Length")
		h.Del("Content-Encoding")
		s := statusFor(store.RequestTimeout())
		writeJSON(d.ResponseWriter, int(s.Code), s)
		return
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if !d.wroteHeader {
		d.WriteHeader(http.StatusOK)
	}
	if d.replaced {
		return len(p), nil
	}
	return d.ResponseWriter.Write(p)
}

func (d *deadlineWriter) Flush() {
	if d.replaced {
		return
	}
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
