package apiserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// metricValue is the value of one counter or gauge.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	switch {
	case out.Counter != nil:
		return out.Counter.GetValue()
	case out.Gauge != nil:
		return out.Gauge.GetValue()
	}
	t.Fatalf("not a counter or gauge: %v", &out)
	return 0
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func configMaps(t *testing.T) *Resource {
	t.Helper()
	res, ok := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if !ok {
		t.Fatal("no configmaps resource")
	}
	return res
}

func TestIsLongRunning(t *testing.T) {
	tests := []struct {
		method, target string
		want           bool
	}{
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=true", true},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=1&resourceVersion=5", true},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps/x?watch=true", true},
		{http.MethodGet, "/apis/apps/v1/deployments?watch=true&allowWatchBookmarks=true", true},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=false", false},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=0", false},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps", false},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps/watch", false},
		{http.MethodPost, "/api/v1/namespaces/a/configmaps?watch=true", false},
		// kube's long-running subresources (none served yet).
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/log", true},
		{http.MethodPost, "/api/v1/namespaces/a/pods/p/exec", true},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/portforward", true},
		// An object named like a subresource is not one.
		{http.MethodGet, "/api/v1/namespaces/a/configmaps/log", false},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/status", false},
		{http.MethodGet, "/healthz", false},
		{http.MethodGet, "/healthz?watch=true", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		if got := isLongRunning(r); got != tt.want {
			t.Errorf("%s %s: long-running = %v, want %v", tt.method, tt.target, got, tt.want)
		}
	}
}

// inflightFixture serves withMaxInFlight over a handler that blocks every
// request whose path starts with /block until release is closed.
type inflightFixture struct {
	handler  http.Handler
	metrics  *inflightMetrics
	entered  chan string
	release  chan struct{}
	blocking sync.WaitGroup
}

func newInflightFixture(t *testing.T, readOnly, mutating int) *inflightFixture {
	t.Helper()
	m, err := newInflightMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	f := &inflightFixture{metrics: m, entered: make(chan string, 16), release: make(chan struct{})}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/block") {
			f.entered <- r.Method + " " + r.URL.Path
			<-f.release
		}
		w.WriteHeader(http.StatusOK)
	})
	f.handler = withMaxInFlight(inner, newInflightPool(readOnly, m, readOnlyKind), newInflightPool(mutating, m, mutatingKind))
	t.Cleanup(f.unblock)
	return f
}

// hold sends a request that blocks inside the handler, and returns once the
// handler has it (so it holds its slot).
func (f *inflightFixture) hold(t *testing.T, method, target string) {
	t.Helper()
	f.blocking.Add(1)
	go func() {
		defer f.blocking.Done()
		f.handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, target, nil))
	}()
	select {
	case <-f.entered:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s never reached the handler", method, target)
	}
}

func (f *inflightFixture) unblock() {
	select {
	case <-f.release:
	default:
		close(f.release)
	}
	f.blocking.Wait()
}

func (f *inflightFixture) serve(method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestMaxInFlight(t *testing.T) {
	const (
		list   = "/api/v1/namespaces/a/configmaps"
		blockR = "/api/v1/namespaces/block/configmaps"
		blockW = "/api/v1/namespaces/block/configmaps"
	)
	type req struct{ method, target string }
	tests := []struct {
		name               string
		readOnly, mutating int
		held               []req // requests holding a slot
		try                req
		want               int
	}{
		{"read-only pool full", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, list}, http.StatusTooManyRequests},
		{"HEAD counts as read-only", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodHead, list}, http.StatusTooManyRequests},
		{"non-resource GET counts as read-only", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, "/version"}, http.StatusTooManyRequests},
		{"mutating pool full", 1, 1, []req{{http.MethodPost, blockW}}, req{http.MethodPut, list + "/x"}, http.StatusTooManyRequests},
		{"delete is mutating", 1, 1, []req{{http.MethodPost, blockW}}, req{http.MethodDelete, list + "/x"}, http.StatusTooManyRequests},
		{"full read-only pool leaves writes", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodPost, list}, http.StatusOK},
		{"full mutating pool leaves reads", 1, 1, []req{{http.MethodPatch, blockW + "/x"}}, req{http.MethodGet, list}, http.StatusOK},
		{"room left", 2, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, list}, http.StatusOK},
		{"watch not counted", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, list + "?watch=true"}, http.StatusOK},
		{"held watches take no slot", 1, 1, []req{{http.MethodGet, blockR + "?watch=1"}}, req{http.MethodGet, list}, http.StatusOK},
		{"healthz not counted", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, "/healthz"}, http.StatusOK},
		{"livez not counted", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, "/livez"}, http.StatusOK},
		{"readyz not counted", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, "/readyz"}, http.StatusOK},
		{"healthz writes counted", 1, 1, []req{{http.MethodPost, blockW}}, req{http.MethodPost, "/healthz"}, http.StatusTooManyRequests},
		{"metrics counted", 1, 1, []req{{http.MethodGet, blockR}}, req{http.MethodGet, "/metrics"}, http.StatusTooManyRequests},
		{"0 = unlimited reads", 0, 1, []req{{http.MethodGet, blockR}, {http.MethodGet, blockR}}, req{http.MethodGet, list}, http.StatusOK},
		{"0 = unlimited writes", 1, 0, []req{{http.MethodPost, blockW}, {http.MethodPost, blockW}}, req{http.MethodPost, list}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newInflightFixture(t, tt.readOnly, tt.mutating)
			for _, h := range tt.held {
				f.hold(t, h.method, h.target)
			}
			rec := f.serve(tt.try.method, tt.try.target)
			if rec.Code != tt.want {
				t.Fatalf("%s %s: status %d, want %d: %s", tt.try.method, tt.try.target, rec.Code, tt.want, rec.Body.String())
			}
			if tt.want != http.StatusTooManyRequests {
				return
			}
			// kube-apiserver's answer, byte for byte (maxinflight.go
			// tooManyRequests: http.Error with Retry-After: 1).
			if got := rec.Header().Get("Retry-After"); got != "1" {
				t.Errorf("Retry-After = %q, want 1", got)
			}
			if got, want := rec.Body.String(), "Too many requests, please try again later.\n"; got != want {
				t.Errorf("body = %q, want %q", got, want)
			}
			if got := rec.Header().Get("Content-Type"); got != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type = %q", got)
			}
			kind := readOnlyKind
			if isMutating(httptest.NewRequest(tt.try.method, tt.try.target, nil)) {
				kind = mutatingKind
			}
			if got := metricValue(t, f.metrics.dropped.WithLabelValues(kind)); got != 1 {
				t.Errorf("apiserver_dropped_requests_total{request_kind=%q} = %v, want 1", kind, got)
			}
			if got := metricValue(t, f.metrics.current.WithLabelValues(kind)); got != float64(len(tt.held)) {
				t.Errorf("apiserver_current_inflight_requests{request_kind=%q} = %v, want %d", kind, got, len(tt.held))
			}
		})
	}
}

// TestMaxInFlightReleases checks that a finished request gives its slot
// back, so the pool recovers after an overload.
func TestMaxInFlightReleases(t *testing.T) {
	f := newInflightFixture(t, 1, 1)
	f.hold(t, http.MethodGet, "/api/v1/namespaces/block/configmaps")
	if rec := f.serve(http.MethodGet, "/api/v1/configmaps"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d while the pool is full, want 429", rec.Code)
	}
	f.unblock()
	if rec := f.serve(http.MethodGet, "/api/v1/configmaps"); rec.Code != http.StatusOK {
		t.Fatalf("status %d after the held request ended, want 200", rec.Code)
	}
	if got := metricValue(t, f.metrics.current.WithLabelValues(readOnlyKind)); got != 0 {
		t.Errorf("apiserver_current_inflight_requests{request_kind=readOnly} = %v after all requests ended, want 0", got)
	}
}

func TestRequestTimeoutParameter(t *testing.T) {
	const serverMax = time.Minute
	tests := []struct {
		query   string
		want    time.Duration
		wantErr string
	}{
		{"", serverMax, ""},
		{"limit=5", serverMax, ""},
		{"timeoutSeconds=5", serverMax, ""}, // a watch/list parameter, not ours
		{"timeout=10s", 10 * time.Second, ""},
		{"timeout=1m30s&limit=5", serverMax, ""}, // larger than the server's: the server's
		{"timeout=1m", serverMax, ""},
		{"timeout=0s", serverMax, ""}, // 0 = the server's maximum, as upstream
		{"timeout=-5s", serverMax, ""},
		{"timeout=", serverMax, ""},
		{"limit=1&timeout=250ms", 250 * time.Millisecond, ""},
		{"timeout=abc", 0, `invalid timeout specified in the request URL - time: invalid duration "abc"`},
		{"timeout=10", 0, `invalid timeout specified in the request URL - time: missing unit in duration "10"`},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?"+tt.query, nil)
		got, err := requestTimeout(r, serverMax)
		switch {
		case tt.wantErr != "":
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%q: error %v, want %q", tt.query, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.query, err)
		case got != tt.want:
			t.Errorf("%q: timeout %v, want %v", tt.query, got, tt.want)
		}
	}
}

// statusOf decodes a metav1.Status response.
func statusOf(t *testing.T, rec *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatalf("decoding %q: %v", rec.Body.String(), err)
	}
	return s
}

func TestRequestDeadline(t *testing.T) {
	const timeoutMessage = "Timeout: request did not complete within requested timeout - context deadline exceeded"
	// waitThen waits for the request's deadline, then answers with respond.
	waitThen := func(respond func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if _, ok := r.Context().Deadline(); !ok {
				w.WriteHeader(http.StatusTeapot) // no deadline: test fails below
				return
			}
			<-r.Context().Done()
			respond(w, r)
		}
	}
	tests := []struct {
		name        string
		target      string
		handler     http.HandlerFunc
		wantCode    int
		wantMessage string
	}{
		{"storage error after the deadline", "/api/v1/namespaces/a/configmaps/x?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, discardLogger(), store.Error(&configMaps(t).Resource, "x", r.Context().Err()))
			}), http.StatusGatewayTimeout, timeoutMessage},
		{"wrapped context error after the deadline", "/api/v1/namespaces/a/configmaps/x?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, discardLogger(), fmt.Errorf("allocating a cluster IP: %w", r.Context().Err()))
			}), http.StatusGatewayTimeout, timeoutMessage},
		{"any error after the deadline", "/api/v1/namespaces/a/configmaps?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				// What a body read cut off by the read deadline becomes.
				http.Error(w, "reading the request body: i/o timeout", http.StatusBadRequest)
			}), http.StatusGatewayTimeout, timeoutMessage},
		{"success after the deadline passes", "/api/v1/namespaces/a/configmaps?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, map[string]string{"kind": "ConfigMapList"})
			}), http.StatusOK, ""},
		{"error before the deadline passes", "/api/v1/namespaces/a/configmaps/x",
			func(w http.ResponseWriter, r *http.Request) {
				writeError(w, discardLogger(), store.Error(&configMaps(t).Resource, "x", storage.ErrNotFound))
			}, http.StatusNotFound, `configmaps "x" not found`},
		{"invalid timeout", "/api/v1/namespaces/a/configmaps?timeout=abc",
			func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) },
			http.StatusBadRequest, `invalid timeout specified in the request URL - time: invalid duration "abc"`},
		{"watch has no deadline", "/api/v1/namespaces/a/configmaps?watch=true&timeout=1ms",
			func(w http.ResponseWriter, r *http.Request) {
				if _, ok := r.Context().Deadline(); ok {
					w.WriteHeader(http.StatusTeapot)
					return
				}
				w.WriteHeader(http.StatusOK)
			}, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			withRequestDeadline(tt.handler, time.Minute).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
			if rec.Code != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantCode, rec.Body.String())
			}
			if tt.wantMessage == "" {
				return
			}
			s := statusOf(t, rec)
			if s.Message != tt.wantMessage || s.Code != int32(tt.wantCode) || s.Kind != "Status" {
				t.Errorf("status %+v, want code %d and message %q", s, tt.wantCode, tt.wantMessage)
			}
			if tt.wantCode == http.StatusGatewayTimeout && s.Reason != metav1.StatusReasonTimeout {
				t.Errorf("reason %q, want Timeout", s.Reason)
			}
		})
	}
}

// TestRequestDeadlineDefault checks the server's maximum applies without a
// ?timeout=, and that 0 turns deadlines off.
func TestRequestDeadlineDefault(t *testing.T) {
	var got time.Duration
	var ok bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d time.Time
		d, ok = r.Context().Deadline()
		got = time.Until(d)
	})
	withRequestDeadline(h, 45*time.Second).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil))
	if !ok || got <= 40*time.Second || got > 45*time.Second {
		t.Errorf("deadline in %v (set: %v), want about 45s", got, ok)
	}
	withRequestDeadline(h, 0).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil))
	if ok {
		t.Errorf("a request timeout of 0 still set a deadline")
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (Limits{}).Validate(); err != nil {
		t.Errorf("all unlimited: %v", err)
	}
	err := Limits{MaxRequestsInflight: -1, RequestTimeout: -time.Second}.Validate()
	want := "--max-requests-inflight can not be negative value\n--request-timeout can not be negative value"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	// The per-user counts take -1 for unlimited; the queue and the
	// durations do not.
	if err := (Limits{MaxListsPerUser: -1, MaxWatchesPerUser: -1}).Validate(); err != nil {
		t.Errorf("unlimited per-user counts: %v", err)
	}
	err = Limits{UserQueueLength: -1, UserQueueWait: -time.Second, WatchWriteTimeout: -time.Second}.Validate()
	want = "the per-user queue length can not be negative\nthe per-user queue wait can not be negative\nthe watch write timeout can not be negative"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestDeadlineWriterKeepsContext(t *testing.T) {
	// The deadline is on the context the handler sees, derived from the
	// request's, so cancelling the request still reaches the handler.
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { err = r.Context().Err() })
	withRequestDeadline(h, time.Minute).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(parent))
	if err != context.Canceled {
		t.Errorf("handler context error %v, want context.Canceled", err)
	}
}

// TestServerRequestTimeout sends requests that run out of time to a real
// server: client-go must see kube's 504 Timeout, whether the deadline hits
// an etcd call or a body that never arrives.
func TestServerRequestTimeout(t *testing.T) {
	ts := sharedServer(t)
	const want = "Timeout: request did not complete within requested timeout - context deadline exceeded"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// ?timeout= shorter than anything etcd can answer in.
	err := ts.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/configmaps").
		Param("timeout", "1ns").Do(ctx).Error()
	if !apierrors.IsTimeout(err) || err.Error() != want {
		t.Errorf("list with timeout=1ns: %v, want a Timeout error %q", err, want)
	}

	// A body announced and never sent: the read deadline ends the wait.
	tlsConfig, err := rest.TLSConfigFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	c, err := tls.Dial("tcp", strings.TrimPrefix(ts.run.URL, "https://"), tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	fmt.Fprintf(c, "POST /api/v1/namespaces/default/configmaps?timeout=300ms HTTP/1.1\r\nHost: localhost\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", ts.config.BearerToken)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var s metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusGatewayTimeout || s.Message != want || s.Reason != metav1.StatusReasonTimeout {
		t.Errorf("stalled body: %d %+v, want 504 %q", resp.StatusCode, s, want)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("the stalled body was answered after %v, want about 300ms", waited)
	}
}
