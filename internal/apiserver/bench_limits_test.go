package apiserver

// Benchmark of what the limits (internal/apiserver/filters) add to a
// request. BenchmarkConfigMapGet gets a ConfigMap through the full
// Handler() (authentication, routing, etcd, encoding) of a server with
// kube's default limits and of one with every limit off, to put the cost
// filters.BenchmarkLimitFilters measures alone next to a real request.
//
// Run: go test -run '^$' -bench ConfigMapGet ./internal/apiserver/

import (
	"context"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
)

// BenchmarkConfigMapGet gets one ConfigMap per iteration through Handler(),
// with kube's default limits and with none.
func BenchmarkConfigMapGet(b *testing.B) {
	for _, tc := range []struct {
		name   string
		limits *filters.Limits
	}{
		{"limits", nil}, // nil = filters.DefaultLimits()
		{"nolimits", &filters.Limits{}},
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
