package document

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	kproto "k8s.io/kube-openapi/pkg/util/proto"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/internal/openapi"
)

func newOpenAPIV2Server(t *testing.T, opts ...Option) *httptest.Server {
	t.Helper()
	oa, err := New(served(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi/v2", oa.ServeV2)
	mux.HandleFunc("GET /openapi/v3", oa.ServeIndex)
	mux.HandleFunc("GET /openapi/v3/{path...}", func(w http.ResponseWriter, r *http.Request) {
		oa.ServeGroupVersion(w, r, r.PathValue("path"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenAPIV2Serving(t *testing.T) {
	srv := newOpenAPIV2Server(t)
	_, jsonBody := getDoc(t, srv.URL+"/openapi/v2", "application/json")
	_, pbBody := getDoc(t, srv.URL+"/openapi/v2", mediaV2Proto)
	jsonTag, pbTag := `"`+hash(jsonBody)+`"`, `"`+hash(pbBody)+`"`
	for _, tc := range []struct {
		name, accept string
		header       []string
		code         int
		contentType  string
		etag         string
	}{
		{"json", "application/json", nil, 200, "application/json", jsonTag},
		{"no Accept", "", nil, 200, "application/json", jsonTag},
		{"any", "*/*", nil, 200, "application/json", jsonTag},
		{"protobuf as kubectl asks", mediaV2Proto, nil, 200, mediaV2ProtoDotted, pbTag},
		{"dotted protobuf", mediaV2ProtoDotted, nil, 200, mediaV2ProtoDotted, pbTag},
		{"protobuf preferred by q", "application/json;q=0.5, " + mediaV2Proto, nil, 200, mediaV2ProtoDotted, pbTag},
		{"json preferred by q", "application/json, " + mediaV2Proto + ";q=0.9", nil, 200, "application/json", jsonTag},
		{"not acceptable", "text/html", nil, 406, "", ""},
		{"revalidate json", "application/json", []string{"If-None-Match", jsonTag}, 304, "", jsonTag},
		{"revalidate protobuf", mediaV2Proto, []string{"If-None-Match", pbTag}, 304, "", pbTag},
		{"json etag does not match protobuf", mediaV2Proto, []string{"If-None-Match", jsonTag}, 200, mediaV2ProtoDotted, pbTag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := getDoc(t, srv.URL+"/openapi/v2", tc.accept, tc.header...)
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.code)
			}
			if tc.contentType != "" && resp.Header.Get("Content-Type") != tc.contentType {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
			if resp.Header.Get("Etag") != tc.etag {
				t.Errorf("Etag %q, want %q", resp.Header.Get("Etag"), tc.etag)
			}
			if tc.code != 406 && resp.Header.Get("Cache-Control") != "no-cache, private" {
				t.Errorf("Cache-Control %q", resp.Header.Get("Cache-Control"))
			}
		})
	}
	// The JSON form parses with gnostic and is the protobuf form.
	doc, err := openapi_v2.ParseDocument(jsonBody)
	if err != nil {
		t.Fatal(err)
	}
	var fromPB openapi_v2.Document
	if err := proto.Unmarshal(pbBody, &fromPB); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(doc, &fromPB) {
		t.Error("JSON and protobuf documents differ")
	}
	var sw map[string]any
	if err := json.Unmarshal(jsonBody, &sw); err != nil {
		t.Fatal(err)
	}
	if sw["swagger"] != "2.0" {
		t.Errorf("swagger %v", sw["swagger"])
	}
	t.Logf("v2: %d bytes JSON, %d bytes protobuf, %d definitions", len(jsonBody), len(pbBody), len(doc.GetDefinitions().GetAdditionalProperties()))
}

// kubectlSupportsQueryParamV2 is kubectl 1.32's v2 fallback check
// (k8s.io/cli-runtime pkg/resource/query_param_verifier.go), restated: the first PATCH operation carrying gvk decides;
// a parameter may be inline or a "#/parameters/<k>" reference.
func kubectlSupportsQueryParamV2(doc *openapi_v2.Document, gvk schema.GroupVersionKind, param string) (found, supported bool) {
	global := map[string]string{}
	for _, p := range doc.GetParameters().GetAdditionalProperties() {
		global[p.GetName()] = p.GetValue().GetNonBodyParameter().GetQueryParameterSubSchema().GetName()
	}
	for _, path := range doc.GetPaths().GetPath() {
		op := path.GetValue().GetPatch()
		if op == nil {
			continue
		}
		match := false
		for _, ext := range op.GetVendorExtension() {
			if ext.GetName() != "x-kubernetes-group-version-kind" {
				continue
			}
			var m map[string]string
			if yaml.Unmarshal([]byte(ext.GetValue().GetYaml()), &m) == nil {
				match = m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind
			}
		}
		if !match {
			continue
		}
		for _, p := range op.GetParameters() {
			name := p.GetParameter().GetNonBodyParameter().GetQueryParameterSubSchema().GetName()
			if ref := p.GetJsonReference().GetXRef(); ref != "" {
				name = global[strings.TrimPrefix(ref, "#/parameters/")]
			}
			if name == param {
				return true, true
			}
		}
		return true, false
	}
	return false, false
}

func TestOpenAPIV2Clients(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want bool
	}{
		{"fieldValidation advertised", nil, true},
		{"fieldValidation omitted", []Option{OmitFieldValidation()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newOpenAPIV2Server(t, tc.opts...)
			dc := cgdiscovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})
			doc, err := dc.OpenAPISchema() // protobuf, as kubectl reads it
			if err != nil {
				t.Fatal(err)
			}
			models, err := kproto.NewOpenAPIData(doc)
			if err != nil {
				t.Fatalf("kubectl's client-side validation rejects the document: %v", err)
			}
			schemas, err := newSchemas(newResources(served()), openapi.V2)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range served() {
				name := schemas.kinds[res.GVK]
				kind, ok := models.LookupModel(name).(*kproto.Kind)
				if !ok {
					t.Errorf("%v: no model %s", res.GVK, name)
					continue
				}
				for _, f := range []string{"apiVersion", "kind", "metadata"} {
					if _, ok := kind.Fields[f]; !ok {
						t.Errorf("%s: no field %s", name, f)
					}
				}
				if found, ok := kubectlSupportsQueryParamV2(doc, res.GVK, "fieldValidation"); !found || ok != tc.want {
					t.Errorf("%v: fieldValidation found %v supported %v", res.GVK, found, ok)
				}
				if _, ok := kubectlSupportsQueryParamV2(doc, res.GVK, "dryRun"); !ok {
					t.Errorf("%v: dryRun unsupported", res.GVK)
				}
			}
			globals := map[string]bool{}
			for _, p := range doc.GetParameters().GetAdditionalProperties() {
				globals[p.GetName()] = true
			}
			if !globals["dryRun"] || globals["fieldValidation"] != tc.want {
				t.Errorf("global parameters %v", globals)
			}
			// The template is ours: spec.template.spec.dnsParams exists for
			// kubectl's client-side validation.
			dep := models.LookupModel("io.dnsplane.api.apps.v1.DeploymentSpec").(*kproto.Kind)
			tmpl := dep.Fields["template"].(*kproto.Ref).SubSchema().(*kproto.Kind)
			pod := tmpl.Fields["spec"].(*kproto.Ref).SubSchema().(*kproto.Kind)
			if _, ok := pod.Fields["dnsParams"]; !ok {
				t.Error("Deployment spec.template.spec has no dnsParams")
			}
		})
	}
}

// TestOpenAPIV3StrategicPatch computes a client-side apply patch the way
// kubectl does from the v3 components: the containers list merges by name.
func TestOpenAPIV3StrategicPatch(t *testing.T) {
	srv := newOpenAPIV2Server(t)
	dc := cgdiscovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})
	root := openapi3.NewRoot(dc.OpenAPIV3())
	doc, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for n, s := range doc.Components.Schemas {
		if gvks, ok := s.Extensions["x-kubernetes-group-version-kind"].([]any); ok {
			for _, g := range gvks {
				if g.(map[string]any)["kind"] == "Deployment" {
					name = n
				}
			}
		}
	}
	if name == "" {
		t.Fatal("no Deployment schema by x-kubernetes-group-version-kind")
	}
	meta := strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: doc.Components.Schemas, Schema: doc.Components.Schemas[name]}
	original := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}}}`)
	modified := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:2"},{"name":"b","image":"b:1"}]}}}}`)
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, original, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"image":"a:2","name":"a"}]}}}}`
	if string(patch) != want {
		t.Errorf("patch %s\nwant  %s", patch, want)
	}
}

func TestNegotiateV2(t *testing.T) {
	for accept, want := range map[string]string{
		"":                 "application/json",
		"*/*":              "application/json",
		"application/*":    "application/json",
		"application/json": "application/json",
		mediaV2Proto:       mediaV2Proto,
		mediaV2ProtoDotted: mediaV2Proto,
		"application/json;q=0.5, " + mediaV2Proto:  mediaV2Proto,
		mediaV2Proto + ";q=0.5, application/json":  "application/json",
		mediaV2Proto + ";q=0, */*":                 "application/json",
		"text/html, " + mediaV2Proto + ";q=0.1":    mediaV2Proto,
		"text/html":                                "",
		"*/json":                                   "",
		"application/yaml, application/json;q=0":   "",
		"application/json;foo, " + mediaV2Proto:    mediaV2Proto, // a malformed range is dropped
		"application/json;q=0;foo, text/html, x/y": "",
	} {
		if got := negotiateV2(accept); got != want {
			t.Errorf("negotiateV2(%q) = %q, want %q", accept, got, want)
		}
	}
}
