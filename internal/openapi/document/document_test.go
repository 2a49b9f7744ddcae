package document

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/dnsplane/dnsplane/api"
	registryrest "github.com/dnsplane/dnsplane/internal/registry/rest"
)

// allVerbs are the verbs the API server serves on every resource.
var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// served is every row of api.Resources as the API server serves it: every
// verb, strategic merge patch on the built-in kinds, and the subresources
// the API server declares (internal/registry/rest.Subresource).
func served() []Resource {
	var out []Resource
	for _, r := range api.Resources() {
		var subs []Subresource
		for _, name := range r.Subresources {
			// The generic ones the row names, as the API server maps
			// their declarations (internal/apiserver documentResources).
			sub, ok := registryrest.Generic(name, registryrest.Default{})
			if !ok {
				continue
			}
			d := Subresource{Name: sub.Name, Kind: sub.Kind, New: sub.New, Verbs: sub.Verbs, Doc: Object}
			if sub.Document == registryrest.DocumentKind {
				d.Doc, d.PatchTypes = Kind, []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}
			}
			subs = append(subs, d)
		}
		switch r.GVK.Kind {
		case "Pod":
			// The API server adds the kind's own subresources
			// (internal/registry/core/pod) to the row.
			r.Subresources = append(slices.Clone(r.Subresources), "binding", "eviction", "exec", "attach", "log")
			subs = append(subs,
				Subresource{Name: "binding", Doc: Create, Kind: corev1.SchemeGroupVersion.WithKind("Binding"), New: func() any { return &corev1.Binding{} }},
				Subresource{Name: "eviction", Doc: Create, Kind: policyv1.SchemeGroupVersion.WithKind("Eviction"), New: func() any { return &policyv1.Eviction{} }},
			)
		case "ServiceAccount":
			r.Subresources = append(slices.Clone(r.Subresources), "token")
			subs = append(subs, Subresource{Name: "token", Doc: Create, Kind: authenticationv1.SchemeGroupVersion.WithKind("TokenRequest"), New: func() any { return &authenticationv1.TokenRequest{} }})
		case "CertificateSigningRequest":
			// internal/registry/certificates/certificatesigningrequest's.
			r.Subresources = append(slices.Clone(r.Subresources), "approval")
			subs = append(subs, Subresource{Name: "approval", Doc: Object, Verbs: []string{"get", "patch", "update"}})
		}
		out = append(out, Resource{Resource: r, Verbs: allVerbs, StrategicMergePatch: r.GVK.Group != "operator.dnsplane.io", Subresources: subs})
	}
	return out
}

// apiDocsServer serves the OpenAPI v3 handlers of every served resource
// over HTTP.
type apiDocsServer struct{ *httptest.Server }

func newAPIDocsServer(t *testing.T, opts ...Option) *apiDocsServer {
	t.Helper()
	oa, err := New(served(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi/v3", oa.ServeIndex)
	mux.HandleFunc("GET /openapi/v3/{path...}", func(w http.ResponseWriter, r *http.Request) {
		oa.ServeGroupVersion(w, r, r.PathValue("path"))
	})
	s := &apiDocsServer{Server: httptest.NewServer(mux)}
	t.Cleanup(s.Close)
	return s
}

// getDoc GETs path with an Accept header and returns the response and body.
func getDoc(t *testing.T, url, accept string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// oaIndex fetches and decodes /openapi/v3.
func oaIndex(t *testing.T, srv *apiDocsServer) map[string]string {
	t.Helper()
	resp, body := getDoc(t, srv.URL+"/openapi/v3", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("index: %d", resp.StatusCode)
	}
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &index); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range index.Paths {
		out[k] = v.ServerRelativeURL
	}
	return out
}

func TestOpenAPIIndex(t *testing.T) {
	srv := newAPIDocsServer(t)
	resp, body := getDoc(t, srv.URL+"/openapi/v3", "application/json")
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); strings.Contains(cc, "immutable") || cc != "no-cache, private" {
		t.Errorf("Cache-Control %q", cc)
	}
	if etag := resp.Header.Get("Etag"); etag != fmt.Sprintf(`"%X"`, sha512.Sum512(body)) {
		t.Errorf("Etag %q", etag)
	}
	if resp, _ := getDoc(t, srv.URL+"/openapi/v3", "", "If-None-Match", resp.Header.Get("Etag")); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", resp.StatusCode)
	}

	index := oaIndex(t, srv)
	var keys []string
	for k := range index {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"api/v1", "apis/admissionregistration.k8s.io/v1", "apis/apps/v1", "apis/autoscaling/v1", "apis/autoscaling/v2", "apis/batch/v1", "apis/certificates.k8s.io/v1", "apis/coordination.k8s.io/v1", "apis/discovery.k8s.io/v1", "apis/events.k8s.io/v1", "apis/networking.k8s.io/v1", "apis/operator.dnsplane.io/v1", "apis/policy/v1", "apis/rbac.authorization.k8s.io/v1", "apis/resource.k8s.io/v1", "apis/scheduling.k8s.io/v1", "apis/storage.k8s.io/v1", "apis/storagemigration.k8s.io/v1"}
	if !slices.Equal(keys, want) {
		t.Errorf("paths %v, want %v", keys, want)
	}
	for key, u := range index {
		_, doc := getDoc(t, srv.URL+"/openapi/v3/"+key, "application/json")
		hash := fmt.Sprintf("%X", sha512.Sum512(doc))
		if u != "/openapi/v3/"+key+"?hash="+hash {
			t.Errorf("%s: serverRelativeURL %q, document hash %s", key, u, hash)
		}
	}
}

func TestOpenAPICaching(t *testing.T) {
	srv := newAPIDocsServer(t)
	index := oaIndex(t, srv)
	current := index["apis/apps/v1"]
	hash := strings.TrimPrefix(current, "/openapi/v3/apis/apps/v1?hash=")
	tests := []struct {
		name, path, accept string
		header             []string
		code               int
		cacheControl       string
		location           string
	}{
		{"no hash", "/openapi/v3/apis/apps/v1", "application/json", nil, 200, "no-cache, private", ""},
		{"current hash", current, "application/json", nil, 200, "public, immutable", ""},
		{"stale hash", "/openapi/v3/apis/apps/v1?hash=0123ABCD", "application/json", nil, 301, "", current},
		{"lower-case hash is another hash", "/openapi/v3/apis/apps/v1?hash=" + strings.ToLower(hash), "application/json", nil, 301, "", current},
		{"revalidation", "/openapi/v3/apis/apps/v1", "application/json", []string{"If-None-Match", `"` + hash + `"`}, 304, "no-cache, private", ""},
		{"revalidation with hash", current, "application/json", []string{"If-None-Match", `"` + hash + `"`}, 304, "public, immutable", ""},
		{"changed etag", "/openapi/v3/apis/apps/v1", "application/json", []string{"If-None-Match", `"OLD"`}, 200, "no-cache, private", ""},
		{"any type", "/openapi/v3/api/v1", "*/*", nil, 200, "no-cache, private", ""},
		{"no Accept", "/openapi/v3/api/v1", "", nil, 200, "no-cache, private", ""},
		{"protobuf only", "/openapi/v3/api/v1", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf", nil, 406, "", ""},
		{"trailing slash", "/openapi/v3/api/v1/", "application/json", nil, 200, "no-cache, private", ""},
		{"unknown group version", "/openapi/v3/apis/apps/v2", "application/json", nil, 404, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := getDoc(t, srv.URL+tc.path, tc.accept, tc.header...)
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.code, body)
			}
			if got := resp.Header.Get("Cache-Control"); got != tc.cacheControl {
				t.Errorf("Cache-Control %q, want %q", got, tc.cacheControl)
			}
			if got := resp.Header.Get("Location"); got != tc.location {
				t.Errorf("Location %q, want %q", got, tc.location)
			}
			if tc.code == 200 || tc.code == 304 {
				key := strings.Trim(strings.TrimPrefix(strings.SplitN(tc.path, "?", 2)[0], "/openapi/v3/"), "/")
				_, wantHash, _ := strings.Cut(index[key], "?hash=")
				if got := resp.Header.Get("Etag"); got != `"`+wantHash+`"` {
					t.Errorf("Etag %q, want hash of %s", got, key)
				}
			}
			if tc.cacheControl == "public, immutable" && resp.Header.Get("Expires") == "" {
				t.Error("no Expires")
			}
			if tc.code == 200 && resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
}

// oaDocs fetches every document as a generic map.
func oaDocs(t *testing.T, srv *apiDocsServer) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for key, u := range oaIndex(t, srv) {
		_, body := getDoc(t, srv.URL+u, "application/json")
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out[key] = doc
	}
	return out
}

func TestOpenAPIDocuments(t *testing.T) {
	srv := newAPIDocsServer(t)
	docs := oaDocs(t, srv)
	verbs := []string{"get", "put", "post", "delete", "patch"}
	wantParams := map[string][]string{
		"post":  {"dryRun", "fieldManager", "fieldValidation"},
		"put":   {"dryRun", "fieldManager", "fieldValidation"},
		"patch": {"dryRun", "fieldManager", "fieldValidation", "force"},
	}
	for key, doc := range docs {
		if doc["openapi"] != "3.0.0" {
			t.Errorf("%s: openapi %v", key, doc["openapi"])
		}
		if info := doc["info"].(map[string]any); info["title"] != "Kubernetes" || info["version"] != "v1.37.2" {
			t.Errorf("%s: info %v", key, info)
		}
		schemas, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)
		if !ok || len(schemas) == 0 {
			t.Errorf("%s: no components.schemas", key)
		}
		for _, res := range served() {
			if groupVersionPath(res.GVK.GroupVersion()) != key {
				continue
			}
			found := false
			for _, s := range schemas {
				gvks, _ := s.(map[string]any)["x-kubernetes-group-version-kind"].([]any)
				for _, g := range gvks {
					g := g.(map[string]any)
					found = found || g["group"] == res.GVK.Group && g["version"] == res.GVK.Version && g["kind"] == res.GVK.Kind
				}
			}
			if !found {
				t.Errorf("%s: no schema for %v", key, res.GVK)
			}
		}
		ids := map[string]string{}
		for path, item := range doc["paths"].(map[string]any) {
			if !strings.HasPrefix(path, "/"+key+"/") {
				t.Errorf("%s: path %s outside the group version", key, path)
			}
			for _, verb := range verbs {
				op, ok := item.(map[string]any)[verb].(map[string]any)
				if !ok {
					continue
				}
				id, _ := op["operationId"].(string)
				if prev, dup := ids[id]; id == "" || dup {
					t.Errorf("%s %s %s: operationId %q (also %s)", key, verb, path, id, prev)
				}
				ids[id] = verb + " " + path
				if _, ok := op["responses"].(map[string]any)["200"]; !ok {
					t.Errorf("%s %s: no 200 response", verb, path)
				}
				gvk, hasGVK := op["x-kubernetes-group-version-kind"]
				if !hasGVK {
					continue
				}
				if _, ok := gvk.(map[string]any); !ok {
					t.Errorf("%s %s: x-kubernetes-group-version-kind is not one object: %v", verb, path, gvk)
				}
				if op["x-kubernetes-action"] == nil {
					t.Errorf("%s %s: no x-kubernetes-action", verb, path)
				}
				params := map[string]map[string]any{}
				ps, _ := op["parameters"].([]any)
				for _, p := range ps {
					pm := p.(map[string]any)
					if pm["$ref"] != nil {
						t.Errorf("%s %s: $ref parameter %v", verb, path, pm)
					}
					params[pm["name"].(string)] = pm
				}
				for _, name := range wantParams[verb] {
					p, ok := params[name]
					if !ok || p["in"] != "query" {
						t.Errorf("%s %s: parameter %s = %v", verb, path, name, p)
					}
				}
				if fv := params["fieldValidation"]; fv != nil {
					s := fv["schema"].(map[string]any)
					if s["type"] != "string" || s["uniqueItems"] != true || fv["description"] == "" {
						t.Errorf("%s %s: fieldValidation %v", verb, path, fv)
					}
				}
				if verb == "patch" {
					var types []string
					for ct := range op["requestBody"].(map[string]any)["content"].(map[string]any) {
						types = append(types, ct)
					}
					sort.Strings(types)
					want := []string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"}
					if strings.HasSuffix(path, "/scale") {
						// What internal/apiserver/scale.go takes: no apply.
						want = want[1:]
					}
					if key != "apis/operator.dnsplane.io/v1" {
						// Built-in kinds take strategic merge patch; the
						// schemas carry its patch metadata.
						want = append(want, "application/strategic-merge-patch+json")
					}
					if !slices.Equal(types, want) {
						t.Errorf("%s: patch content types %v", path, types)
					}
				}
			}
		}
	}

	// Every resource has its collection, item and status paths.
	for _, res := range served() {
		key := groupVersionPath(res.GVK.GroupVersion())
		collection := "/" + key + "/" + res.Plural
		if res.Namespaced {
			collection = "/" + key + "/namespaces/{namespace}/" + res.Plural
		}
		paths := docs[key]["paths"].(map[string]any)
		want := map[string][]string{collection: {"get", "post", "delete"}, collection + "/{name}": {"get", "put", "patch", "delete"}}
		if res.HasSubresource("status") {
			want[collection+"/{name}/status"] = []string{"get", "put", "patch"}
		}
		if res.Namespaced {
			want["/"+key+"/"+res.Plural] = []string{"get"}
		}
		for path, verbs := range want {
			item, ok := paths[path].(map[string]any)
			if !ok {
				t.Errorf("%s: no path %s", res.Plural, path)
				continue
			}
			for _, verb := range verbs {
				op, ok := item[verb].(map[string]any)
				if !ok {
					t.Errorf("%s: no %s", path, verb)
					continue
				}
				gvk := op["x-kubernetes-group-version-kind"].(map[string]any)
				if gvk["group"] != res.GVK.Group || gvk["version"] != res.GVK.Version || gvk["kind"] != res.GVK.Kind {
					t.Errorf("%s %s: gvk %v", verb, path, gvk)
				}
			}
		}
	}

	// Subresources of another kind: /scale (autoscaling/v1 Scale) and
	// pods/binding (v1 Binding), with their kind's schema in the document.
	for _, res := range served() {
		key := groupVersionPath(res.GVK.GroupVersion())
		item := "/" + key + "/namespaces/{namespace}/" + res.Plural + "/{name}"
		for _, sub := range []struct {
			name, group, kind, schema string
			verbs                     []string
		}{
			{"scale", "autoscaling", "Scale", "io.k8s.api.autoscaling.v1.Scale", []string{"get", "put", "patch"}},
			{"binding", "", "Binding", "io.k8s.api.core.v1.Binding", []string{"post"}},
			{"eviction", "policy", "Eviction", "io.k8s.api.policy.v1.Eviction", []string{"post"}},
			{"token", "authentication.k8s.io", "TokenRequest", "io.k8s.api.authentication.v1.TokenRequest", []string{"post"}},
		} {
			path, _ := docs[key]["paths"].(map[string]any)[item+"/"+sub.name].(map[string]any)
			if !res.HasSubresource(sub.name) {
				if path != nil {
					t.Errorf("%s: path %s/%s, which is not served", key, item, sub.name)
				}
				continue
			}
			if path == nil {
				t.Errorf("%s: no path %s/%s", key, item, sub.name)
				continue
			}
			for _, verb := range sub.verbs {
				op, _ := path[verb].(map[string]any)
				gvk, _ := op["x-kubernetes-group-version-kind"].(map[string]any)
				if gvk["group"] != sub.group || gvk["version"] != "v1" || gvk["kind"] != sub.kind {
					t.Errorf("%s %s/%s: gvk %v", verb, item, sub.name, gvk)
				}
			}
			if _, ok := docs[key]["components"].(map[string]any)["schemas"].(map[string]any)[sub.schema]; !ok {
				t.Errorf("%s: no schema %s", key, sub.schema)
			}
		}
	}

	// Well-known operation IDs.
	ids := map[string]string{}
	for key, doc := range docs {
		for path, item := range doc["paths"].(map[string]any) {
			for _, verb := range verbs {
				if op, ok := item.(map[string]any)[verb].(map[string]any); ok {
					ids[op["operationId"].(string)] = key + " " + verb + " " + path
				}
			}
		}
	}
	for id, want := range map[string]string{
		"patchCoreV1Namespace":                            "api/v1 patch /api/v1/namespaces/{name}",
		"patchCoreV1NamespacedPod":                        "api/v1 patch /api/v1/namespaces/{namespace}/pods/{name}",
		"patchCoreV1NamespacedPodStatus":                  "api/v1 patch /api/v1/namespaces/{namespace}/pods/{name}/status",
		"createCoreV1NamespacedPodBinding":                "api/v1 post /api/v1/namespaces/{namespace}/pods/{name}/binding",
		"createCoreV1NamespacedPodEviction":               "api/v1 post /api/v1/namespaces/{namespace}/pods/{name}/eviction",
		"createCoreV1NamespacedServiceAccountToken":       "api/v1 post /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
		"readAppsV1NamespacedDeploymentScale":             "apis/apps/v1 get /apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
		"patchCoreV1NamespacedReplicationControllerScale": "api/v1 patch /api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale",
		"listCoreV1PodForAllNamespaces":                   "api/v1 get /api/v1/pods",
		"deleteCoreV1CollectionNamespacedPod":             "api/v1 delete /api/v1/namespaces/{namespace}/pods",
		"createAppsV1NamespacedDeployment":                "apis/apps/v1 post /apis/apps/v1/namespaces/{namespace}/deployments",
		"replaceAppsV1NamespacedDeploymentStatus":         "apis/apps/v1 put /apis/apps/v1/namespaces/{namespace}/deployments/{name}/status",
		"readCoordinationV1NamespacedLease":               "apis/coordination.k8s.io/v1 get /apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}",
		"patchDiscoveryV1NamespacedEndpointSlice":         "apis/discovery.k8s.io/v1 patch /apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices/{name}",
		"patchOperatorDnsplaneIoV1DNS":                    "apis/operator.dnsplane.io/v1 patch /apis/operator.dnsplane.io/v1/dnses/{name}",
		"getBatchV1APIResources":                          "apis/batch/v1 get /apis/batch/v1/",
		"listOperatorDnsplaneIoV1DNS":                     "apis/operator.dnsplane.io/v1 get /apis/operator.dnsplane.io/v1/dnses",
		"deleteOperatorDnsplaneIoV1CollectionDNS":         "apis/operator.dnsplane.io/v1 delete /apis/operator.dnsplane.io/v1/dnses",
	} {
		if ids[id] != want {
			t.Errorf("operationId %s at %q, want %q", id, ids[id], want)
		}
	}
}

// kubectlSupportsQueryParamV3 is kubectl 1.32's server-side support check
// (k8s.io/cli-runtime pkg/resource/query_param_verifier_v3.go), restated: among all paths, a PATCH operation whose single-object
// x-kubernetes-group-version-kind equals gvk decides; the parameter must be
// among its parameters (a "#/parameters/<k>" $ref resolved through
// components.parameters). Because kubectl walks a Go map, the first
// matching operation is random, so this returns false unless every
// matching PATCH operation lists the parameter, and reports how many match.
func kubectlSupportsQueryParamV3(doc *spec3.OpenAPI, gvk schema.GroupVersionKind, param string) (supported bool, matches int) {
	if doc == nil || doc.Paths == nil {
		return false, 0
	}
	supported = true
	for _, path := range doc.Paths.Paths {
		op := path.Patch
		if op == nil {
			continue
		}
		var got map[string]string
		if err := op.Extensions.GetObject("x-kubernetes-group-version-kind", &got); err != nil {
			continue
		}
		if got["group"] != gvk.Group || got["version"] != gvk.Version || got["kind"] != gvk.Kind {
			continue
		}
		matches++
		found := false
		for _, p := range op.Parameters {
			if ref := p.Ref.String(); strings.HasPrefix(ref, "#/parameters/") && doc.Components != nil {
				if resolved, ok := doc.Components.Parameters[strings.TrimPrefix(ref, "#/parameters/")]; ok {
					p = resolved
				}
			}
			if p.Name == param && p.In == "query" {
				found = true
			}
		}
		supported = supported && found
	}
	return supported && matches > 0, matches
}

// TestOpenAPIClientGo reads the documents with client-go's OpenAPI v3 client
// and root, as kubectl does, and runs kubectl's support check for every
// served kind.
func TestOpenAPIClientGo(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want bool
	}{
		{"fieldValidation advertised", nil, true},
		{"fieldValidation omitted", []Option{OmitFieldValidation()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIDocsServer(t, tc.opts...)
			dc := cgdiscovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})
			root := openapi3.NewRoot(dc.OpenAPIV3())
			gvs, err := root.GroupVersions()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gvs, sortedGroupVersions(newResources(served()).gvs)) {
				t.Errorf("group versions %v", gvs)
			}
			for _, gv := range gvs {
				doc, err := root.GVSpec(gv)
				if err != nil {
					t.Fatalf("%v: %v", gv, err)
				}
				if doc.Components == nil || doc.Components.Schemas == nil {
					t.Errorf("%v: components.schemas missing", gv)
				}
				if _, err := root.GVSpecAsMap(gv); err != nil {
					t.Errorf("%v: %v", gv, err)
				}
			}
			for _, res := range served() {
				doc, err := root.GVSpec(res.GVK.GroupVersion())
				if err != nil {
					t.Fatal(err)
				}
				// One PATCH of the kind per path that reads and writes
				// the object whole: the object, /status, /approval.
				wantMatches := 1
				if res.HasSubresource("status") {
					wantMatches++
				}
				if res.HasSubresource("approval") {
					wantMatches++
				}
				ok, n := kubectlSupportsQueryParamV3(doc, res.GVK, "fieldValidation")
				if ok != tc.want || n != wantMatches {
					t.Errorf("%v: fieldValidation supported = %v over %d PATCH operations", res.GVK, ok, n)
				}
				if ok, _ := kubectlSupportsQueryParamV3(doc, res.GVK, "dryRun"); !ok {
					t.Errorf("%v: dryRun not supported", res.GVK)
				}
			}
			// Custom resources are checked against the Namespace PATCH.
			core, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := kubectlSupportsQueryParamV3(core, schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "fieldValidation"); ok != tc.want {
				t.Errorf("Namespace: %v", ok)
			}
			if ok, _ := kubectlSupportsQueryParamV3(core, schema.GroupVersionKind{Version: "v1", Kind: "List"}, "fieldValidation"); ok {
				t.Error("List supported")
			}
			if _, err := root.GVSpec(schema.GroupVersion{Group: "example.com", Version: "v1"}); err == nil {
				t.Error("unknown group version found")
			}
		})
	}
}

func sortedGroupVersions(gvs []schema.GroupVersion) []schema.GroupVersion {
	out := slices.Clone(gvs)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func TestOpenAPIGroupVersionName(t *testing.T) {
	for gv, want := range map[schema.GroupVersion]string{
		{Version: "v1"}:                                     "CoreV1",
		{Group: "apps", Version: "v1"}:                      "AppsV1",
		{Group: "discovery.k8s.io", Version: "v1"}:          "DiscoveryV1",
		{Group: "operator.dnsplane.io", Version: "v1"}:      "OperatorDnsplaneIoV1",
		{Group: "my-group.example.com", Version: "v1beta1"}: "MyGroupExampleComV1beta1",
	} {
		if got := oaGroupVersionName(gv); got != want {
			t.Errorf("%v: %s, want %s", gv, got, want)
		}
	}
	if got := oaTag(schema.GroupVersion{Group: "operator.dnsplane.io", Version: "v1"}); got != "operatorDnsplaneIo_v1" {
		t.Errorf("tag %s", got)
	}
	if got := oaTag(schema.GroupVersion{Version: "v1"}); got != "core_v1" {
		t.Errorf("tag %s", got)
	}
}
