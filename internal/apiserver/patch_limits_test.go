package apiserver

import (
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
