package apiserver

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestStrategicMergeListLimit: strategicpatch merges lists in time that
// grows with the square of their lengths (a 320 KB patch took 15 s), so
// a patch over the price is refused before it runs, naming the list; and
// merge keys or directive entries that are maps, which made strategicpatch
// panic, are a 400.
func TestStrategicMergeListLimit(t *testing.T) {
	res, _ := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	env := func(n int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = fmt.Sprintf(`{"name":"E%d","value":"x"}`, i)
		}
		return "[" + strings.Join(list, ",") + "]"
	}
	current := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","finalizers":["a"]},"spec":{"containers":[{"name":"c","image":"x","env":` + env(10) + `}]}}`)
	tests := []struct {
		name, patch string
		code        int
		msg         string
	}{
		{"short lists merge", `{"spec":{"containers":[{"name":"c","env":` + env(1000) + `}]}}`, 0, ""},
		{"a long list without a live one is taken as is", `{"metadata":{"ownerReferences":[]},"spec":{"initContainers":[{"name":"i","image":"x","env":` + env(20000) + `}]}}`, 0, ""},
		{"long nested list", `{"spec":{"containers":[{"name":"c","env":` + env(5000) + `}]}}`, http.StatusRequestEntityTooLarge,
			"Request entity too large: the strategic merge patch needs about 25100104 list-merge steps, more than the limit of 10000000 (the largest: 5000 patch elements merged with 10 at .spec.containers[name=c].env)"},
		{"map as merge key", `{"spec":{"containers":[{"name":{}},{"name":{}}]}}`, http.StatusBadRequest,
			`.spec.containers: the merge key "name" of a list element must be a scalar, not map[string]interface {}`},
		{"map in $retainKeys", `{"metadata":{"$retainKeys":[{}]}}`, http.StatusBadRequest, "invalid patch format of retainKeys"},
		{"map in a delete list", `{"metadata":{"$deleteFromPrimitiveList/finalizers":[{}]}}`, http.StatusBadRequest,
			".metadata.$deleteFromPrimitiveList/finalizers: the entries of a delete list must be scalars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := applyPatch(mediaStrategicPatch, current, []byte(tt.patch), res)
			if tt.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) || int(se.ErrStatus.Code) != tt.code || !strings.HasPrefix(se.ErrStatus.Message, tt.msg) {
				t.Errorf("got %v, want %d %q", err, tt.code, tt.msg)
			}
		})
	}
}

// sameJSON reports whether two JSON documents hold the same value,
// numbers compared as written.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := decodeUseNumber(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := decodeUseNumber(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// TestMergePatchMatchesJSONPatchLibrary: the linear merge patch gives
// json-patch's results, nulls pruned where it prunes them.
func TestMergePatchMatchesJSONPatchLibrary(t *testing.T) {
	res, _ := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	current := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1","b":"2"}},"data":{"x":"y"},"n":1.50,"list":[1,{"k":null}]}`
	tests := []struct{ name, patch string }{
		{"add and replace", `{"metadata":{"labels":{"c":"3","a":"x"}}}`},
		{"null deletes", `{"metadata":{"labels":{"a":null}},"data":null}`},
		{"null of a missing key", `{"nothere":null}`},
		{"object replaces scalar", `{"n":{"a":1,"b":null}}`},
		{"scalar replaces object", `{"metadata":{"labels":"x"}}`},
		{"new object, nulls pruned", `{"spec":{"a":{"b":null,"c":1}}}`},
		{"array replaced, nulls in its objects pruned", `{"list":[null,{"a":null,"b":[{"c":null}]},3]}`},
		{"numbers kept as written", `{"n":1.0e2,"m":12345678901234567890}`},
		{"empty patch", `{}`},
		{"array patch is the result", `[1,2]`},
		{"null patch is the result", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mergePatch([]byte(current), []byte(tt.patch), res)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonpatch.MergePatch([]byte(current), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestMergePatchDeepNesting: a deeply nested merge patch costs time linear
// in its size, encoded once rather than once per level.
func TestMergePatchDeepNesting(t *testing.T) {
	res, _ := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	const depth = 9000
	patch := []byte(`{"metadata":{"labels":{"x":` + strings.Repeat(`{"a":`, depth) + `1` + strings.Repeat(`}`, depth) + `}}}`)
	current := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"y":"z"}}}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := mergePatch(current, patch, res)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"y":"z"`)) {
		t.Errorf("the label y is gone: %.200s", out)
	}
	// Encoding the 9,000 levels once per level would copy ~200 MB.
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("%d MiB allocated for a %d-byte patch", n>>20, len(patch))
	}
}
