package filters

// BenchmarkLimitFilters measures the limit filters alone around a handler
// that does nothing, so the number is their whole cost; internal/apiserver's
// BenchmarkConfigMapGet puts it next to a real request.
//
// Run: go test -run '^$' -bench LimitFilters ./internal/apiserver/filters/

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func BenchmarkLimitFilters(b *testing.B) {
	m, err := NewMaxInFlight(DefaultMaxRequestsInflight, DefaultMaxMutatingRequestsInflight, prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	var noop http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	chains := []struct {
		name string
		h    http.Handler
	}{
		{"none", noop},
		{"inflight", WithMaxInFlight(noop, m, testResolver)},
		{"deadline", WithRequestDeadline(noop, DefaultRequestTimeout, testResolver)},
		{"both", WithRequestDeadline(WithMaxInFlight(noop, m, testResolver), DefaultRequestTimeout, testResolver)},
	}
	for _, c := range chains {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/bench/configmaps/cm-1", nil)
			rec := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				c.h.ServeHTTP(rec, req)
			}
		})
	}
}
