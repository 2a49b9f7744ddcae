package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// patchResult is what a raw PATCH returned.
type patchResult struct {
	code   int
	status metav1.Status // when the body is a Status
	body   []byte
}

// rawPatcher sends PATCH requests with any body and media type to ts.
func rawPatcher(t *testing.T, ts *testServer) func(path, ctype, body string) patchResult {
	t.Helper()
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	return func(path, ctype, body string) patchResult {
		t.Helper()
		req, err := http.NewRequest(http.MethodPatch, ts.run.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ctype)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		out := patchResult{code: resp.StatusCode, body: data}
		if resp.StatusCode >= 300 {
			if err := json.Unmarshal(data, &out.status); err != nil {
				t.Fatalf("PATCH %s: %d with a body that is not a Status: %.300s", path, resp.StatusCode, data)
			}
		}
		return out
	}
}

// configMapWith creates ConfigMap name in ns with data and returns its
// resourceVersion.
func configMapWith(t *testing.T, ts *testServer, ns, name string, data map[string]string) string {
	t.Helper()
	cm, err := ts.client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "test"}}, Data: data}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.ResourceVersion
}

// requireUnchanged fails t unless ConfigMap name still has resourceVersion rv.
func requireUnchanged(t *testing.T, ts *testServer, ns, name, rv string) {
	t.Helper()
	cm, err := ts.client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.ResourceVersion != rv {
		t.Errorf("the rejected patch changed %s: resourceVersion %s, was %s", name, cm.ResourceVersion, rv)
	}
}

// doublingCopyPatch copies /data into itself n times: each operation
// doubles the document.
func doublingCopyPatch(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/data","path":"/data/copy%d"}`, i)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// TestJSONPatchCopyLimit: eight copies of a 256 KiB value would build a
// 64 MiB document; kube's 3 MiB copy limit stops them with kube's 422, the
// object is unchanged and the server goes on serving.
func TestJSONPatchCopyLimit(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	rv := configMapWith(t, ts, ns, "big", map[string]string{"a": strings.Repeat("x", 256<<10)})
	patch := rawPatcher(t, ts)
	path := "/api/v1/namespaces/" + ns + "/configmaps/big"

	got := patch(path, mediaJSONPatch, doublingCopyPatch(8))
	want := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Message: "the server rejected our request due to an error in our request",
		Details: &metav1.StatusDetails{},
	}
	if got.code != http.StatusUnprocessableEntity || !reflect.DeepEqual(got.status, want) {
		t.Errorf("doubling copy patch: %d %+v, want kube's %+v", got.code, got.status, want)
	}
	requireUnchanged(t, ts, ns, "big", rv)
	// Copies within the limit still work, and the server still serves.
	got = patch(path, mediaJSONPatch, `[{"op":"copy","from":"/data/a","path":"/data/b"}]`)
	if got.code != http.StatusOK {
		t.Errorf("a copy within the limit: %d %s", got.code, got.status.Message)
	}
}

// TestJSONPatchCopyLimitMemory: the refused patch allocates a bounded
// amount, not the 64 MiB document (the limit stops the fourth copy, at
// 3.75 MiB copied).
func TestJSONPatchCopyLimitMemory(t *testing.T) {
	res, _ := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	current := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"` + strings.Repeat("x", 256<<10) + `"}}`)
	patch := []byte(doublingCopyPatch(8))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := applyPatch(mediaJSONPatch, current, patch, res)
	runtime.ReadMemStats(&after)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("doubling copy patch: %v, want 422 Invalid", err)
	}
	// Process-wide, so a loose bound: an unbounded run allocates well over
	// the 64 MiB it builds.
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("the refused patch allocated %d MiB", n>>20)
	}
}

// TestJSONPatchOperationLimit: kube's 10,000 operations, counted before
// any runs.
func TestJSONPatchOperationLimit(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	rv := configMapWith(t, ts, ns, "ops", nil)
	patch := rawPatcher(t, ts)
	path := "/api/v1/namespaces/" + ns + "/configmaps/ops"
	ops := func(n int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = `{"op":"test","path":"/metadata/name","value":"ops"}`
		}
		list[n-1] = `{"op":"add","path":"/metadata/labels/n","value":"` + fmt.Sprint(n) + `"}`
		return "[" + strings.Join(list, ",") + "]"
	}
	tests := []struct {
		ops  int
		code int
		msg  string
	}{
		{10001, http.StatusRequestEntityTooLarge, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"},
		{10000, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.ops), func(t *testing.T) {
			got := patch(path, mediaJSONPatch, ops(tt.ops))
			if got.code != tt.code || got.status.Message != tt.msg {
				t.Fatalf("%d operations: %d %q, want %d %q", tt.ops, got.code, got.status.Message, tt.code, tt.msg)
			}
			if tt.code == http.StatusRequestEntityTooLarge {
				if got.status.Reason != metav1.StatusReasonRequestEntityTooLarge {
					t.Errorf("reason %q", got.status.Reason)
				}
				requireUnchanged(t, ts, ns, "ops", rv)
			}
		})
	}
}

// keys returns n data keys of vlen bytes each, as a JSON object.
func keys(n, vlen int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%06d":"%s"`, i, strings.Repeat("v", vlen))
	}
	b.WriteByte('}')
	return b.String()
}

// TestPatchSizeLimits: patches and applies whose result cannot be stored
// are refused before the merge that would build it, naming the limit, and
// change nothing. The messages say which check refused them: the checks
// before merging say "the patched/applied object is at least", etcd's
// refusal after merging says "the object is too large to store". The
// many-small-keys rows are the ones structured-merge-diff took seconds on
// (its cost grows with the square of a map's keys): 7 s for the 100,000-key
// apply, ~36 s for the 200,000-key merge patch.
func TestPatchSizeLimits(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	patch := rawPatcher(t, ts)
	const (
		etcdLimit   = "more than the 1572864 bytes (1.5 MiB) etcd accepts per object"
		decodeLimit = "more than the 3145728 bytes (3 MiB) the server accepts for an object"
	)
	// The most data a ConfigMap may hold (1 MiB, upstream's MaxSecretSize).
	big := map[string]string{"a": strings.Repeat("x", 1<<20)}
	cmBody := func(name, data string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":` + data + `}`
	}
	tests := []struct {
		name, ctype, query string
		exists             bool // the ConfigMap exists before the patch
		body               func(name string) string
		msg                string
		limit              string            // etcdLimit when empty
		data               map[string]string // of the existing ConfigMap
	}{
		{"merge, large values", mediaMergePatch, "", true,
			func(string) string { return `{"data":` + keys(12, 140<<10) + `}` }, "the patched object is at least", "", nil},
		{"merge, many small keys", mediaMergePatch, "", true,
			func(string) string { return `{"data":` + keys(200000, 0) + `}` }, "the patched object is at least", "", nil},
		{"strategic, large values", mediaStrategicPatch, "", true,
			func(string) string { return `{"data":` + keys(12, 140<<10) + `}` }, "the patched object is at least", "", nil},
		{"json patch, large value", mediaJSONPatch, "", true,
			func(string) string {
				return `[{"op":"add","path":"/data/big","value":"` + strings.Repeat("v", 1600<<10) + `"}]`
			}, "the patched object is at least", "", nil},
		// Two copies of 1 MiB are within the 3 MiB copy limit, but the
		// document they make is not.
		{"json patch, copies past the decode limit", mediaJSONPatch, "", true,
			func(string) string {
				return `[{"op":"copy","from":"/data/a","path":"/data/b"},{"op":"copy","from":"/data/a","path":"/data/c"}]`
			}, "the patched object is at least", decodeLimit, big},
		{"apply create, large values", mediaApplyPatch, "?fieldManager=test", false,
			func(name string) string { return cmBody(name, keys(12, 140<<10)) }, "the applied object is at least", "", nil},
		{"apply create, many small keys", mediaApplyPatch, "?fieldManager=test", false,
			func(name string) string { return cmBody(name, keys(100000, 0)) }, "the applied object is at least", "", nil},
		{"apply update, many small keys", mediaApplyPatch, "?fieldManager=test", true,
			func(name string) string { return cmBody(name, keys(100000, 0)) }, "the applied object is at least", "", nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("cm%d", i)
			rv := ""
			if tt.exists {
				data := tt.data
				if data == nil {
					data = map[string]string{"a": "b"}
				}
				rv = configMapWith(t, ts, ns, name, data)
			}
			limit := tt.limit
			if limit == "" {
				limit = etcdLimit
			}
			got := patch("/api/v1/namespaces/"+ns+"/configmaps/"+name+tt.query, tt.ctype, tt.body(name))
			if got.code != http.StatusRequestEntityTooLarge || got.status.Reason != metav1.StatusReasonRequestEntityTooLarge ||
				!strings.HasPrefix(got.status.Message, "Request entity too large: "+tt.msg) || !strings.HasSuffix(got.status.Message, limit) {
				t.Errorf("got %d %s %q, want 413 %q … %q", got.code, got.status.Reason, got.status.Message, tt.msg, limit)
			}
			if tt.exists {
				requireUnchanged(t, ts, ns, name, rv)
			} else if _, err := ts.client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the refused apply created %s: %v", name, err)
			}
		})
	}
}

// TestApplySizeCheckRunsFirst: the size check of an apply body runs on
// the body alone, before any merge, and costs a bounded number of
// allocations; it refuses what cannot be stored and lets a body that fits
// through.
func TestApplySizeCheckRunsFirst(t *testing.T) {
	reg := NewRegistry()
	fm, err := newFieldManagers(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{reg: reg, fields: fm, cfg: Config{MaxObjectBytes: embeddedEtcdMaxObjectBytes}}
	res, _ := reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	body := func(data string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"b"}},"data":` + data + `}`)
	}
	tests := []struct {
		name    string
		body    []byte
		refused bool
	}{
		{"small", body(keys(10, 10)), false},
		{"fits: 1 MiB of values", body(keys(8, 128<<10)), false},
		// 520 KB of JSON, and 40,000 keys need 560 KB of managedFields.
		{"fits: 40,000 small keys", body(keys(40000, 0)), false},
		{"over: 100,000 small keys", body(keys(100000, 0)), true},
		{"over: 12 × 140 KiB", body(keys(12, 140<<10)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			allocs := testing.AllocsPerRun(1, func() {
				var ab applyBody
				if ab, err = decodeApplyPatch(res, tt.body); err != nil {
					t.Fatal(err)
				}
				err = s.checkApplySize(res, "", ab)
			})
			if refused := apierrors.IsRequestEntityTooLargeError(err); refused != tt.refused || (err != nil && !refused) {
				t.Errorf("checkApplySize: %v, want refused=%v", err, tt.refused)
			}
			// Decoding and the check allocate ~11 times per key; with a
			// structured-merge-diff merge it is ~24 (fieldpath sets,
			// typed values, the merged object's decode).
			if limit := 16*float64(bytes.Count(tt.body, []byte(`":`))) + 1000; allocs > limit {
				t.Errorf("%v allocations, more than %v", allocs, limit)
			}
		})
	}
}
