package filters

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

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

// ErrRequestTimeout is the 504 of a request that ran out of time:
// kube-apiserver's message when a handler gives up at the deadline
// (endpoints/handlers/finisher), "Timeout: request did not complete within
// requested timeout - context deadline exceeded". Handlers map the
// context's DeadlineExceeded to it, and WithRequestDeadline answers it for
// any error written after the deadline.
func ErrRequestTimeout() *apierrors.StatusError {
	return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %s", context.DeadlineExceeded), 0)
}

// WithRequestDeadline gives every request that is not long-running a
// deadline, as kube-apiserver's WithRequestDeadline: limit
// (--request-timeout), or a smaller ?timeout=; limit 0 sets none. Handlers
// stop at the deadline because everything they wait on (etcd, the request
// body) honours it:
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
func WithRequestDeadline(next http.Handler, limit time.Duration, resolver apirequest.RequestInfoResolver) http.Handler {
	if limit <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isLongRunning(r, resolver) {
			next.ServeHTTP(w, r)
			return
		}
		timeout, bad := requestTimeout(r, limit)
		if bad != nil {
			writeStatus(w, bad)
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

// writeStatus writes err as the JSON metav1.Status body the API server's
// handlers write (kind and apiVersion set, a trailing newline as kube's
// JSON serializer), so a filter's error reads like a handler's.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	s := err.Status()
	s.Kind, s.APIVersion = "Status", "v1"
	body, merr := json.Marshal(s)
	if merr != nil {
		// A Status is upstream's type and always encodes; should it
		// not, the code still reaches the client.
		http.Error(w, s.Message, int(s.Code))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	_, _ = w.Write(append(body, '\n'))
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
		writeStatus(d.ResponseWriter, ErrRequestTimeout())
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
