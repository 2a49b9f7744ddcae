package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

// inflightFixture serves WithMaxInFlight over a handler that blocks every
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
	m, err := NewMaxInFlight(readOnly, mutating, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	f := &inflightFixture{metrics: m.metrics, entered: make(chan string, 16), release: make(chan struct{})}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/block") {
			f.entered <- r.Method + " " + r.URL.Path
			<-f.release
		}
		w.WriteHeader(http.StatusOK)
	})
	f.handler = WithMaxInFlight(inner, m, testResolver)
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
	t.Parallel()
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
			t.Parallel()
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
	t.Parallel()
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
