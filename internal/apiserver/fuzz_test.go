package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"k8s.io/apimachinery/pkg/runtime/schema"
	sjson "sigs.k8s.io/json"

	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

// FuzzDecodeObject feeds arbitrary bodies to the decode path of every
// resource: it must answer with an object or an API error, never panic.
func FuzzDecodeObject(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"dnsPolicy":"Custom"}}`), false)
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  paused: yes\n  paused: no\n"), true)
	f.Add([]byte(`{"metadata":{"name":5}}`), false)
	f.Add([]byte("- a\n- b\n"), true)
	reg := NewRegistry()
	f.Fuzz(func(t *testing.T, body []byte, yaml bool) {
		format := strictdecode.JSON
		if yaml {
			format = strictdecode.YAML
		}
		for _, res := range reg.Resources() {
			d, err := decodeObject(res, body, format)
			if err == nil && d.obj == nil {
				t.Fatalf("%s: no object and no error", res.Plural)
			}
		}
	})
}

// FuzzApplyPatch applies arbitrary patches of the three types to a stored
// Deployment: a bad patch is an API error, never a panic, and no patch
// grows the document past the copy limit. A merge patch gives what
// json-patch's MergePatch, which the linear one replaced, gives.
func FuzzApplyPatch(f *testing.F) {
	current := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"a":"b"},"finalizers":["f"]},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"nginx","env":[{"name":"A","value":"1"}]}]}}}}`)
	f.Add([]byte(`{"spec":{"replicas":3}}`), uint8(0))
	f.Add([]byte(`{"metadata":{"labels":{"a":null,"c":"d"}},"spec":{"template":{"spec":{"containers":[{"name":"x","image":null}]}}}}`), uint8(0))
	f.Add([]byte(`[{"op":"remove","path":"/metadata/labels/a"}]`), uint8(1))
	f.Add([]byte(`[{"op":"copy","from":"/spec","path":"/spec/a"},{"op":"copy","from":"/spec","path":"/spec/b"},{"op":"copy","from":"/spec","path":"/spec/c"}]`), uint8(1))
	f.Add([]byte(`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],"containers":[{"name":"web","$patch":"delete"}]}}}}`), uint8(2))
	f.Add([]byte(`{"metadata":{"$retainKeys":["x"]}}`), uint8(2))
	// Made strategicpatch panic before they were refused.
	f.Add([]byte(`{"spec":{"template":{"spec":{"containers":[{"name":{}},{"name":{}}]}}}}`), uint8(2))
	f.Add([]byte(`{"metadata":{"$retainKeys":[{}]}}`), uint8(2))
	f.Add([]byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[[]]}}`), uint8(2))
	f.Add([]byte(`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":[]}],"containers":[{"name":"web","env":[{"name":"B"}]}]}}}}`), uint8(2))
	res, _ := NewRegistry().Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	kinds := []string{mediaMergePatch, mediaJSONPatch, mediaStrategicPatch}
	f.Fuzz(func(t *testing.T, patch []byte, kind uint8) {
		k := kinds[int(kind)%len(kinds)]
		out, err := applyPatch(k, current, patch, res)
		if err != nil {
			return
		}
		if len(out) > len(current)+len(patch)+maxJSONPatchCopyBytes {
			t.Fatalf("a %d-byte patch grew the document to %d bytes", len(patch), len(out))
		}
		if k != mediaMergePatch || !json.Valid(out) {
			return
		}
		// With a key given twice json-patch keeps odd leftovers; here the
		// last one wins, as in every other decoder of the server.
		var probe any
		if dupes, err := sjson.UnmarshalStrict(patch, &probe, sjson.DisallowDuplicateFields); err != nil || len(dupes) > 0 {
			return
		}
		want, err := jsonpatch.MergePatch(current, patch)
		if err != nil || !json.Valid(want) {
			return
		}
		var a, b any
		if decodeUseNumber(out, &a) == nil && decodeUseNumber(want, &b) == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("merge patch %s:\ngot  %s\nwant %s", patch, out, want)
		}
	})
}

// FuzzParseResourcePath parses arbitrary URLs without panicking and never
// yields a resource request with an empty resource.
func FuzzParseResourcePath(f *testing.F) {
	for _, p := range []string{"/api/v1/namespaces/ns/pods/p/status", "/apis/apps/v1/deployments", "/api/v1/namespaces/x", "//api//v1", "/apis/a/b/c/d/e/f/g"} {
		f.Add(p, "GET", "watch=1")
	}
	f.Fuzz(func(t *testing.T, path, method, query string) {
		u := &url.URL{Path: path, RawQuery: query}
		info, ok := parseResourcePath(&http.Request{Method: method, URL: u})
		if ok && info.Resource == "" {
			t.Fatalf("%q: resource request without a resource: %+v", path, info)
		}
	})
}

// FuzzApply feeds arbitrary apply bodies through decoding and the
// structured-merge-diff merge against a stored Deployment: every outcome is
// an object or an API error, never a panic; and the size floor that
// refuses bodies before merging never exceeds the merged object's size.
func FuzzApply(f *testing.F) {
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n"), false)
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"paused":true,"paused":false,"foo":1}}`), true)
	f.Add([]byte("apiVersion: v1\nkind: Pod\n"), false)
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"a":"b"},"annotations":{"c":"d"}},"status":{"replicas":2}}`), false)
	reg := NewRegistry()
	fm, err := newFieldManagers(reg)
	if err != nil {
		f.Fatal(err)
	}
	s := &Server{reg: reg, fields: fm}
	res, _ := reg.Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	old, err := decodeObject(res, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`), strictdecode.JSON)
	if err != nil {
		f.Fatal(err)
	}
	info := requestInfo{Namespace: "ns", Name: "web", fieldManager: "fuzz"}
	f.Fuzz(func(t *testing.T, body []byte, force bool) {
		ab, err := decodeApplyPatch(res, body)
		if err != nil {
			return
		}
		if err := s.checkApplySize(res, "", ab); err != nil {
			return
		}
		// The floor, with the small-body shortcut off; it consumes the
		// typed body, so from a decode of its own.
		fb, _ := decodeApplyPatch(res, body)
		floor, err := s.appliedSizeFloor(res, "", fb.typed, fb.patch.Object, fb.docBytes, 0)
		if err != nil {
			t.Fatal(err)
		}
		merged, err := s.mergeApply(res, info, old.obj, ab.patch, force)
		if err != nil {
			return
		}
		data, err := json.Marshal(merged)
		if err != nil {
			t.Fatal(err)
		}
		if floor > len(data) {
			t.Fatalf("size floor %d, but the merged object is %d bytes: %s", floor, len(data), data)
		}
	})
}

// FuzzProtobufBody feeds arbitrary bodies labelled protobuf to every
// built-in resource: anything without the k8s\x00 envelope is refused, and
// every refusal is a 400, never a panic or a 500.
func FuzzProtobufBody(f *testing.F) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": "b"}}
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, Spec: corev1.PodSpec{DNSPolicy: "Custom"}}
	for _, obj := range []runtime.Object{cm, pod} {
		var buf bytes.Buffer
		if err := protobufSerializer.Encode(obj, &buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte{})
	f.Add([]byte("k8s\x00"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap"}`))
	var builtins []*Resource
	for _, res := range NewRegistry().Resources() {
		if builtin(res) {
			builtins = append(builtins, res)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, res := range builtins {
			_, err := protobufToJSON(res, body)
			if err == nil {
				if !bytes.HasPrefix(body, []byte("k8s\x00")) {
					t.Fatalf("%s: accepted a body without the protobuf envelope: %q", res.Plural, body)
				}
				continue
			}
			if code := apierrors.ReasonForError(err); code != metav1.StatusReasonBadRequest {
				t.Fatalf("%s: %v (%s), want a 400", res.Plural, err, code)
			}
		}
	})
}

// FuzzDeleteOptions feeds arbitrary DeleteOptions bodies and queries to
// deleteOptions: every outcome is options kube-apiserver would accept or
// an API error, never a panic; accepted options name a known
// propagationPolicy, never together with orphanDependents (the store's
// FuzzPlanDelete feeds such options to the delete plan).
func FuzzDeleteOptions(f *testing.F) {
	for _, seed := range []struct{ body, query string }{
		{`{"propagationPolicy":"Orphan"}`, ""},
		{`{"orphanDependents":true,"propagationPolicy":"Orphan"}`, ""},
		{"", "propagationPolicy=Foreground&gracePeriodSeconds=0"},
		{"", "orphanDependents=false"},
		{`{"dryRun":["All"],"preconditions":{"uid":"u"}}`, "propagationPolicy=Sideways"},
	} {
		f.Add(seed.body, seed.query)
	}
	f.Fuzz(func(t *testing.T, body, query string) {
		r, err := http.NewRequest(http.MethodDelete, "/api/v1/namespaces/ns/pods/p?"+query, bytes.NewReader([]byte(body)))
		if err != nil {
			return
		}
		r.Header.Set("Content-Type", "application/json")
		opts, _, err := deleteOptions(r)
		if err != nil {
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				t.Fatalf("not an API error: %v", err)
			}
			return
		}
		//nolint:staticcheck // SA1019: the deprecated field is still honoured
		if opts.OrphanDependents != nil && opts.PropagationPolicy != nil {
			t.Fatalf("accepted both orphanDependents and propagationPolicy: %+v", opts)
		}
		if p := opts.PropagationPolicy; p != nil && *p != metav1.DeletePropagationOrphan && *p != metav1.DeletePropagationForeground && *p != metav1.DeletePropagationBackground {
			t.Fatalf("accepted propagationPolicy %q", *p)
		}
	})
}
