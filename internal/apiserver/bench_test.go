package apiserver

// Benchmarks of pod create/get/list/update.
//
// The BenchmarkPod* functions call the server's full handler chain
// (Server.Handler(): metrics, bearer-token authentication, routing, decoding,
// validation, etcd, encoding) directly with httptest.NewRecorder, so TLS, the
// network and the client are not measured. The *TLS variants send the same
// requests through the real HTTPS listener with client-go (JSON), so one run
// shows how much of an end-to-end request is the handler.
//
// Every benchmark starts its own API server with embedded etcd in
// b.TempDir() (outside the timed loop) and stops it when it ends. etcd runs
// in this process, so allocs/op include etcd's server and client work, and
// for the TLS variants client-go's as well.
//
// Run: go test -run '^$' -bench . -benchtime 2s ./internal/apiserver/

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	benchNamespace = "bench"
	podsPath       = "/api/v1/namespaces/" + benchNamespace + "/pods"
	// benchListSize is how many pods BenchmarkPodList lists per request and
	// the get benchmarks go round-robin over.
	benchListSize = 100
	// templateVar marks the varying part of a templated JSON body.
	templateVar = "@@VAR@@"
)

// handlerBench is an API server whose handler the benchmark calls directly.
type handlerBench struct {
	ts      *testServer
	handler http.Handler
	auth    string // "Bearer <admin token>": Handler() authenticates
}

// newHandlerBench starts a server over embedded etcd in b.TempDir(), stopped
// when b ends, and creates the benchmark namespace.
func newHandlerBench(b *testing.B) *handlerBench {
	b.Helper()
	ts := startTestServer(b, b.TempDir(), "")
	b.Cleanup(func() { ts.stop(b) })
	if ts.config.BearerToken == "" {
		b.Fatal("the generated kubeconfig has no bearer token")
	}
	hb := &handlerBench{ts: ts, handler: ts.run.Server.Handler(), auth: "Bearer " + ts.config.BearerToken}
	ns := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + benchNamespace + `"}}`)
	hb.do(b, http.MethodPost, "/api/v1/namespaces", ns, http.StatusCreated)
	return hb
}

// do serves one request and fails b unless it gets the status want. (No
// b.Helper: it runs in the timed loop.)
func (hb *handlerBench) do(b *testing.B, method, path string, body []byte, want int) {
	b.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", hb.auth)
	rec := httptest.NewRecorder()
	hb.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: status %d, want %d: %s", method, path, rec.Code, want, rec.Body.String())
	}
}

// createPods creates pods <prefix>0 … <prefix>(n-1) in the bench namespace.
func (hb *handlerBench) createPods(b *testing.B, prefix string, n int) {
	b.Helper()
	tmpl := newPodTemplate(b, templateVar, "")
	for i := range n {
		hb.do(b, http.MethodPost, podsPath, tmpl.render(prefix+strconv.Itoa(i)), http.StatusCreated)
	}
}

// podTemplate is a pod's JSON with one varying string (its name or the value
// of its "rev" label), so a body costs next to nothing to build and the
// benchmark measures the server.
type podTemplate struct {
	prefix, suffix, buf []byte
}

// newPodTemplate renders a pod named name (with a "rev" label of rev, when
// not empty); templateVar in either is what render replaces.
func newPodTemplate(b *testing.B, name, rev string) *podTemplate {
	b.Helper()
	p := pod(name)
	p.APIVersion, p.Kind = "v1", "Pod"
	if rev != "" {
		p.Labels["rev"] = rev
	}
	data, err := json.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	before, after, ok := bytes.Cut(data, []byte(templateVar))
	if !ok {
		b.Fatalf("pod template has no %s: %s", templateVar, data)
	}
	return &podTemplate{prefix: before, suffix: after}
}

// render returns the body with v in place of templateVar; the slice is reused
// by the next call.
func (t *podTemplate) render(v string) []byte {
	t.buf = append(append(append(t.buf[:0], t.prefix...), v...), t.suffix...)
	return t.buf
}

// BenchmarkPodCreate creates a new pod per iteration (POST, 201).
func BenchmarkPodCreate(b *testing.B) {
	hb := newHandlerBench(b)
	tmpl := newPodTemplate(b, templateVar, "")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		hb.do(b, http.MethodPost, podsPath, tmpl.render("create-"+strconv.Itoa(i)), http.StatusCreated)
		i++
	}
}

// BenchmarkPodGet gets one pod per iteration, round-robin over 100 pods.
func BenchmarkPodGet(b *testing.B) {
	hb := newHandlerBench(b)
	hb.createPods(b, "get-", benchListSize)
	paths := make([]string, benchListSize)
	for i := range paths {
		paths[i] = podsPath + "/get-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		hb.do(b, http.MethodGet, paths[i%len(paths)], nil, http.StatusOK)
		i++
	}
}

// BenchmarkPodList lists a namespace of 100 pods per iteration (one page, no
// selector).
func BenchmarkPodList(b *testing.B) {
	hb := newHandlerBench(b)
	hb.createPods(b, "list-", benchListSize)
	b.ReportAllocs()
	for b.Loop() {
		hb.do(b, http.MethodGet, podsPath, nil, http.StatusOK)
	}
}

// BenchmarkPodUpdate replaces one pod per iteration (PUT, 200), changing its
// "rev" label each time. The body carries no resourceVersion, which is an
// unconditional update: the server still reads the current object and
// compare-and-swaps on its revision, as for a client-go Update.
func BenchmarkPodUpdate(b *testing.B) {
	hb := newHandlerBench(b)
	hb.createPods(b, "update-", 1)
	tmpl := newPodTemplate(b, "update-0", templateVar)
	path := podsPath + "/update-0"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		hb.do(b, http.MethodPut, path, tmpl.render(strconv.Itoa(i)), http.StatusOK)
		i++
	}
}

// newTLSClient starts a server like newHandlerBench and returns a client-go
// clientset for its HTTPS listener that sends and accepts JSON and is not
// throttled on the client side.
func newTLSClient(b *testing.B) kubernetes.Interface {
	b.Helper()
	hb := newHandlerBench(b)
	cfg := rest.CopyConfig(hb.ts.config)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.QPS, cfg.Burst = 1e6, 1e6
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkPodCreateTLS is BenchmarkPodCreate end to end: client-go over
// HTTPS to the real listener.
func BenchmarkPodCreateTLS(b *testing.B) {
	pods := newTLSClient(b).CoreV1().Pods(benchNamespace)
	ctx := context.Background()
	// The first request opens the connection; keep the handshake out.
	if _, err := pods.Create(ctx, pod("warmup"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := pods.Create(ctx, pod("create-"+strconv.Itoa(i)), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPodGetTLS is BenchmarkPodGet end to end: client-go over HTTPS.
func BenchmarkPodGetTLS(b *testing.B) {
	pods := newTLSClient(b).CoreV1().Pods(benchNamespace)
	ctx := context.Background()
	names := make([]string, benchListSize)
	for i := range names {
		names[i] = "get-" + strconv.Itoa(i)
		if _, err := pods.Create(ctx, pod(names[i]), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := pods.Get(ctx, names[i%len(names)], metav1.GetOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
