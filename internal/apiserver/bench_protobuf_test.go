package apiserver

// Benchmarks of a list of 1,000 ConfigMaps answered as JSON and as protobuf
// (docs/apiserver.md, "Content types"): the handler alone, as the BenchmarkPod*
// benchmarks measure it, and end to end through client-go over HTTPS, which
// adds the client's decoding. Response bytes are reported as resp-B/op.
//
// Run: go test -run '^$' -bench ConfigMapList -benchtime 3s ./internal/apiserver/

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	benchConfigMaps    = 1000
	benchConfigMapPath = "/api/v1/namespaces/" + benchNamespace + "/configmaps"
)

func BenchmarkConfigMapList(b *testing.B) {
	hb := newHandlerBench(b)
	for i := range benchConfigMaps {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","labels":{"app":"bench","tier":"backend"},"annotations":{"owner":"team-a"}},`+
			`"data":{"config.yaml":"listen: 0.0.0.0:8080\nupstream: http://backend-%d.bench.svc.cluster.local\ntimeout: 30s\n","mode":"production"}}`, i, i)
		hb.do(b, http.MethodPost, benchConfigMapPath, []byte(body), http.StatusCreated)
	}
	for _, accept := range []struct{ name, header string }{
		{"JSON", "application/json"},
		{"Protobuf", acceptProtobufFirst},
	} {
		b.Run("handler/"+accept.name, func(b *testing.B) {
			var size int
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, benchConfigMapPath, nil)
				req.Header.Set("Accept", accept.header)
				req.Header.Set("Authorization", hb.auth)
				rec := httptest.NewRecorder()
				hb.handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "resp-B/op")
		})
		b.Run("client-go/"+accept.name, func(b *testing.B) {
			cfg := rest.CopyConfig(hb.ts.config)
			cfg.AcceptContentTypes = accept.header
			cfg.QPS, cfg.Burst = 1e6, 1e6
			c, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			cms := c.CoreV1().ConfigMaps(benchNamespace)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				list, err := cms.List(ctx, metav1.ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if len(list.Items) != benchConfigMaps {
					b.Fatalf("listed %d, want %d", len(list.Items), benchConfigMaps)
				}
			}
		})
	}
}
