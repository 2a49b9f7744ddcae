package apiserver

// Benchmarks of a list of 1,000 ConfigMaps answered as JSON and as protobuf
// (docs/apiserver.md, "Content types"): the handler alone, as the BenchmarkPod*
// benchmarks measure it, and end to end through client-go over HTTPS, which
// adds the client's decoding. Response bytes are reported as resp-B/op.
//
// BenchmarkConfigMapListCodec isolates the two halves the media type
// changes, without etcd or the network: the server's encoding of the list
// (writeObjects) and client-go's decoding of the body.
//
// Run: go test -run '^$' -bench ConfigMapList -benchtime 3s ./internal/apiserver/

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

const (
	benchConfigMaps    = 1000
	benchConfigMapPath = "/api/v1/namespaces/" + benchNamespace + "/configmaps"
)

// benchConfigMap is the i-th ConfigMap of the benchmarks, about 700 bytes
// of JSON once stored.
func benchConfigMap(i int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","labels":{"app":"bench","tier":"backend"},"annotations":{"owner":"team-a"}},`+
		`"data":{"config.yaml":"listen: 0.0.0.0:8080\nupstream: http://backend-%d.bench.svc.cluster.local\ntimeout: 30s\n","mode":"production"}}`, i, i)
}

func BenchmarkConfigMapList(b *testing.B) {
	hb := newHandlerBench(b)
	for i := range benchConfigMaps {
		hb.do(b, http.MethodPost, benchConfigMapPath, []byte(benchConfigMap(i)), http.StatusCreated)
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

func BenchmarkConfigMapListCodec(b *testing.B) {
	res, ok := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if !ok {
		b.Fatal("no configmaps")
	}
	items := make([]any, benchConfigMaps)
	for i := range items {
		cm := &corev1.ConfigMap{}
		if err := json.Unmarshal([]byte(benchConfigMap(i)), cm); err != nil {
			b.Fatal(err)
		}
		cm.Namespace, cm.UID, cm.ResourceVersion = benchNamespace, types.UID(fmt.Sprintf("uid-%d", i)), strconv.Itoa(i+10)
		cm.CreationTimestamp = metav1.Now()
		items[i] = cm
	}
	s := &Server{}
	lm := metav1.ListMeta{ResourceVersion: "2000"}
	decoder := scheme.Codecs.WithoutConversion()
	for _, accept := range []struct{ name, header string }{
		{"JSON", "application/json"},
		{"Protobuf", acceptProtobufFirst},
	} {
		encode := func() *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, benchConfigMapPath, nil)
			req.Header.Set("Accept", accept.header)
			rec := httptest.NewRecorder()
			if err := s.writeObjects(rec, req, res, http.StatusOK, nil, items, lm); err != nil {
				b.Fatal(err)
			}
			return rec
		}
		b.Run("encode/"+accept.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				encode()
			}
		})
		rec := encode()
		body, ct := rec.Body.Bytes(), rec.Header().Get("Content-Type")
		info, ok := runtime.SerializerInfoForMediaType(decoder.SupportedMediaTypes(), ct)
		if !ok {
			b.Fatalf("client-go has no decoder for %q", ct)
		}
		dec := decoder.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
		b.Run("client-decode/"+accept.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var list corev1.ConfigMapList
				if _, _, err := dec.Decode(body, nil, &list); err != nil || len(list.Items) != benchConfigMaps {
					b.Fatalf("decoding: %d items, %v", len(list.Items), err)
				}
			}
		})
	}
}
