package apiserver

// Benchmarks of the four patch types on one pod, through the full handler
// chain like the BenchmarkPod* benchmarks of bench_test.go (same server
// setup, same caveats: etcd runs in-process, so allocs/op include its work).
// Each iteration changes the pod's "rev" label, so every request is a real
// write, never a no-op.
//
// Run: go test -run '^$' -bench 'BenchmarkPodPatch|BenchmarkMergePatch' -benchtime 2s ./internal/apiserver/

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// patchBench is one pod to patch and the body of each patch type, with
// templateVar where the label value goes.
type patchBench struct {
	ctype string
	query string
	body  string
}

var patchBenches = []struct {
	name string
	patchBench
}{
	{"Merge", patchBench{mediaMergePatch, "", `{"metadata":{"labels":{"rev":"` + templateVar + `"}}}`}},
	{"JSON", patchBench{mediaJSONPatch, "", `[{"op":"replace","path":"/metadata/labels/rev","value":"` + templateVar + `"}]`}},
	{"Strategic", patchBench{mediaStrategicPatch, "", `{"metadata":{"labels":{"rev":"` + templateVar + `"}}}`}},
	{"Apply", patchBench{mediaApplyPatch, "?fieldManager=bench&force=true", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"patch-0","labels":{"rev":"` + templateVar + `"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}`}},
}

// patch serves one PATCH of the given media type and fails b unless it gets
// the status want. (No b.Helper: it runs in the timed loop.)
func (hb *handlerBench) patch(b *testing.B, path, ctype string, body []byte, want int) {
	b.Helper()
	req := httptest.NewRequest(http.MethodPatch, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", hb.auth)
	rec := httptest.NewRecorder()
	hb.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("PATCH %s: status %d, want %d: %s", path, rec.Code, want, rec.Body.String())
	}
}

// BenchmarkPodPatch patches one pod's "rev" label per iteration (200), one
// sub-benchmark per patch type; the server and pod are shared by the
// sub-benchmarks.
func BenchmarkPodPatch(b *testing.B) {
	hb := newHandlerBench(b)
	hb.createPods(b, "patch-", 1)
	path := podsPath + "/patch-0"
	for _, pb := range patchBenches {
		b.Run(pb.name, func(b *testing.B) {
			before, after, _ := bytes.Cut([]byte(pb.body), []byte(templateVar))
			tmpl := &podTemplate{prefix: before, suffix: after}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				hb.patch(b, path+pb.query, pb.ctype, tmpl.render(pb.name+strconv.Itoa(i)), http.StatusOK)
				i++
			}
		})
	}
}

// BenchmarkMergePatch compares json-patch's MergePatch with mergePatch,
// which replaced it, on the same documents: a label change on a pod, and
// 10,000 keys merged into a ConfigMap's data (json-patch's cost grows with
// the square of the keys merged into one object).
func BenchmarkMergePatch(b *testing.B) {
	res, _ := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	p := pod("p")
	p.APIVersion, p.Kind = "v1", "Pod"
	podJSON, err := json.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	var data strings.Builder
	data.WriteString(`{"data":{`)
	for i := range 10000 {
		if i > 0 {
			data.WriteByte(',')
		}
		fmt.Fprintf(&data, `"k%05d":"v"`, i)
	}
	data.WriteString(`}}`)
	docs := []struct{ name, current, patch string }{
		{"PodLabel", string(podJSON), `{"metadata":{"labels":{"rev":"1"}}}`},
		{"10000Keys", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"}}`, data.String()},
	}
	for _, d := range docs {
		b.Run(d.name+"/jsonpatch", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jsonpatch.MergePatch([]byte(d.current), []byte(d.patch)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/linear", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mergePatch([]byte(d.current), []byte(d.patch), res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
