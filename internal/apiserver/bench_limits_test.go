package apiserver

// Benchmarks of what the limits (limits.go) add to every request.
//
// BenchmarkLimitFilters measures the filters alone around a handler that
// does nothing, so the number is their whole cost. BenchmarkConfigMapGet
// gets a ConfigMap through the full Handler() (authentication, routing,
// etcd, encoding) of a server with kube's default limits and of one with
// every limit off, to put that cost next to a real request.
//
// Run: go test -run '^$' -bench 'LimitFilters|ConfigMapGet' ./internal/apiserver/

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/clientcmd"
)

func BenchmarkLimitFilters(b *testing.B) {
	m, err := newInflightMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	readOnly := newInflightPool(DefaultMaxRequestsInflight, m, readOnlyKind)
	mutating := newInflightPool(DefaultMaxMutatingRequestsInflight, m, mutatingKind)
	var noop http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	chains := []struct {
		name string
		h    http.Handler
	}{
		{"none", noop},
		{"inflight", withMaxInFlight(noop, readOnly, mutating)},
		{"deadline", withRequestDeadline(noop, DefaultRequestTimeout)},
		{"both", withRequestDeadline(withMaxInFlight(noop, readOnly, mutating), DefaultRequestTimeout)},
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

// BenchmarkConfigMapGet gets one ConfigMap per iteration through Handler(),
// with kube's default limits and with none.
func BenchmarkConfigMapGet(b *testing.B) {
	for _, tc := range []struct {
		name   string
		limits *Limits
	}{
		{"limits", nil}, // nil = DefaultLimits()
		{"nolimits", &Limits{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run, err := startRunning(ctx, b.TempDir(), Config{Limits: tc.limits})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = run.Stop(ctx)
			})
			cfg, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
			if err != nil {
				b.Fatal(err)
			}
			hb := &handlerBench{handler: run.Server.Handler(), auth: "Bearer " + cfg.BearerToken}
			ns := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + benchNamespace + `"}}`)
			hb.do(b, http.MethodPost, "/api/v1/namespaces", ns, http.StatusCreated)
			path := "/api/v1/namespaces/" + benchNamespace + "/configmaps"
			cm := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"Corefile":".:53 {\n    forward . 192.0.2.1\n}\n"}}`)
			hb.do(b, http.MethodPost, path, cm, http.StatusCreated)
			b.ReportAllocs()
			for b.Loop() {
				hb.do(b, http.MethodGet, path+"/cm", nil, http.StatusOK)
			}
		})
	}
}
