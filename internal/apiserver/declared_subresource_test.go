package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/dnsplane/dnsplane/internal/admission"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/discovery"
	"github.com/dnsplane/dnsplane/internal/openapi/document"
	"github.com/dnsplane/dnsplane/internal/registry"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// stamped is the ConfigMap strategy with one more subresource, stamp,
// declared as a kind's package declares its own: nothing else in the
// server names it.
type stamped struct{ rest.Strategy }

func (stamped) Subresources() []rest.Subresource {
	return []rest.Subresource{{Name: "stamp", Verbs: []string{"get", "update"}, Document: rest.DocumentObject, Update: stamp{}}}
}

// stampLabel is the one field configmaps/stamp writes.
const stampLabel = "example.com/stamp"

// stamp writes a ConfigMap's stampLabel and keeps everything else, under
// rules and an admission check of its own.
type stamp struct{}

func (stamp) PrepareForUpdate(_ context.Context, obj, old any) any {
	out := old.(*corev1.ConfigMap).DeepCopy()
	in := obj.(*corev1.ConfigMap)
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	out.Labels[stampLabel] = in.Labels[stampLabel]
	out.ResourceVersion = in.ResourceVersion
	return out
}

func (stamp) ValidateUpdate(_ context.Context, obj, _ any) field.ErrorList {
	if obj.(*corev1.ConfigMap).Labels[stampLabel] == "" {
		return field.ErrorList{field.Required(field.NewPath("metadata", "labels").Key(stampLabel), "a stamp")}
	}
	return nil
}

func (stamp) ResetFields() *fieldpath.Set {
	return fieldpath.NewSet(fieldpath.MakePathOrDie("data"))
}

// stampAdmission is an admission plugin on configmaps/stamp writes: the
// chain sees a write through a declared subresource with its name.
type stampAdmission struct{ *kadmission.Handler }

func (stampAdmission) Validate(_ context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	cm, ok := a.GetObject().(*corev1.ConfigMap)
	if ok && a.GetSubresource() == "stamp" && cm.Labels[stampLabel] == "forbidden" {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, cm.Name, fmt.Errorf("no such stamp"))
	}
	return nil
}

// stampServer is a Server whose ConfigMap strategy is stamped, with what
// New derives from its registry derived from that one.
func stampServer(t *testing.T) *Server {
	t.Helper()
	etcd, err := storage.StartEmbedded(t.Context(), filepath.Join(t.TempDir(), "etcd"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Close() })
	client, err := storage.Connect(t.Context(), etcd.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	objects := storage.New(client, "/registry")
	s, err := New(Config{Store: objects})
	if err != nil {
		t.Fatal(err)
	}
	strategies := registry.Strategies(registry.Config{})
	cm := schema.GroupKind{Kind: "ConfigMap"}
	strategies[cm] = stamped{strategies[cm]}
	if s.reg, err = newRegistry(strategies); err != nil {
		t.Fatal(err)
	}
	s.admission = admission.NewChain([]admission.Plugin{{Name: "Stamp", Interface: stampAdmission{kadmission.NewHandler(kadmission.Update)}}})
	s.attachStores()
	if s.fields, err = newFieldManagers(s.reg); err != nil {
		t.Fatal(err)
	}
	s.discovery = discovery.New(discoveryResources(s.reg))
	if s.openapi, err = document.New(documentResources(s.reg)); err != nil {
		t.Fatal(err)
	}
	// A namespace to create in, and the ConfigMap created through the API,
	// so that its managed fields are tracked from the start.
	nsRes, _ := s.reg.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	ns := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns","uid":"u0"},"status":{"phase":"Active"}}`
	if _, err := objects.Create(context.Background(), store.Key(&nsRes.Resource, "", "ns"), []byte(ns)); err != nil {
		t.Fatal(err)
	}
	created := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"a"}},"data":{"a":"1"}}`
	if code, body := do(s, http.MethodPost, "/api/v1/namespaces/ns/configmaps", "application/json", created); code != http.StatusCreated {
		t.Fatalf("creating the ConfigMap: %d %s", code, body)
	}
	return s
}

// do sends one request to s and returns the answer's code and body.
func do(s *Server, method, path, contentType, body string) (int, []byte) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestDeclaredObjectSubresource: a subresource that writes its parent whole
// is one declaration in the kind's strategy. Discovery lists it with the
// parent's kind and its verbs, the OpenAPI documents have its operations,
// and the server serves it with its own rules, reset fields and admission,
// with no other edit anywhere.
func TestDeclaredObjectSubresource(t *testing.T) {
	t.Parallel()
	s := stampServer(t)

	code, body := do(s, http.MethodGet, "/api/v1", "", "")
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil {
		t.Fatalf("/api/v1: %d %v", code, err)
	}
	var found *metav1.APIResource
	for i, r := range list.APIResources {
		if r.Name == "configmaps/stamp" {
			found = &list.APIResources[i]
		}
	}
	if found == nil || found.Kind != "ConfigMap" || !found.Namespaced || strings.Join(found.Verbs, ",") != "get,update" {
		t.Errorf("discovery of configmaps/stamp: %+v", found)
	}

	code, body = do(s, http.MethodGet, "/openapi/v3/api/v1", "", "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); code != http.StatusOK || err != nil {
		t.Fatalf("/openapi/v3/api/v1: %d %v", code, err)
	}
	ops := doc.Paths["/api/v1/namespaces/{namespace}/configmaps/{name}/stamp"]
	if ops["get"] == nil || ops["put"] == nil || ops["patch"] != nil {
		t.Errorf("OpenAPI operations of configmaps/stamp: %v", ops)
	}

	const path = "/api/v1/namespaces/ns/configmaps/c/stamp"
	put := func(stampValue string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","labels":{%q:%q,"app":"b"}},"data":{"a":"2"}}`,
			stampLabel, stampValue)
	}
	for _, tc := range []struct {
		name, method, contentType, body string
		code                            int
		want                            string // in the answer
	}{
		{"rules of its own", http.MethodPut, "application/json", put(""), http.StatusUnprocessableEntity, `metadata.labels[example.com/stamp]: Required value: a stamp`},
		{"admission of the subresource", http.MethodPut, "application/json", put("forbidden"), http.StatusForbidden, "no such stamp"},
		{"undeclared verb", http.MethodPatch, "application/merge-patch+json", `{}`, http.StatusMethodNotAllowed, ""},
		{"get", http.MethodGet, "", "", http.StatusOK, `"data":{"a":"1"}`},
	} {
		code, body := do(s, tc.method, path, tc.contentType, tc.body)
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, code, body, tc.code, tc.want)
		}
	}

	code, body = do(s, http.MethodPut, path+"?fieldManager=stamper", "application/json", put("v1"))
	var got corev1.ConfigMap
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil {
		t.Fatalf("PUT stamp: %d %s", code, body)
	}
	if got.Labels[stampLabel] != "v1" || got.Labels["app"] != "a" || got.Data["a"] != "1" {
		t.Errorf("stamp wrote labels %v, data %v; want only the stamp changed", got.Labels, got.Data)
	}
	var entry *metav1.ManagedFieldsEntry
	for i, e := range got.ManagedFields {
		if e.Manager == "stamper" {
			entry = &got.ManagedFields[i]
		}
	}
	if entry == nil || entry.Subresource != "stamp" || entry.FieldsV1 == nil ||
		!strings.Contains(entry.FieldsV1.GetRawString(), stampLabel) || strings.Contains(entry.FieldsV1.GetRawString(), "f:data") {
		t.Errorf("managed fields %+v; want stamper's entry for subresource stamp owning the stamp only", got.ManagedFields)
	}
}

// withSubresources is a strategy with subresources declared beside its
// own.
type withSubresources struct {
	rest.Strategy
	extra []rest.Subresource
}

func (w withSubresources) Subresources() []rest.Subresource {
	var own []rest.Subresource
	if s, ok := w.Strategy.(subresourcer); ok {
		own = s.Subresources()
	}
	return append(own, w.extra...)
}

// TestRegistryRefusesBadDeclarations: a declaration the server could not
// serve as declared fails the registry, and so the server's start.
func TestRegistryRefusesBadDeclarations(t *testing.T) {
	t.Parallel()
	serve := func(context.Context, rest.Objects, rest.Request) (rest.Response, error) { return rest.Response{}, nil }
	for _, tc := range []struct {
		name string
		kind schema.GroupKind
		sub  rest.Subresource
		want string
	}{
		{"a namespace subresource kube's request parser does not know", schema.GroupKind{Kind: "Namespace"},
			rest.Subresource{Name: "purge", Verbs: []string{"update"}, Update: stamp{}}, "not a namespace subresource"},
		{"a name declared twice", schema.GroupKind{Kind: "Pod"},
			rest.Subresource{Name: "binding", Verbs: []string{"create"}, Serve: serve}, `lists subresource "binding" twice`},
		{"a generic name declared again", schema.GroupKind{Kind: "Pod"},
			rest.Subresource{Name: rest.StatusName, Verbs: []string{"get"}, Serve: serve}, "twice"},
		{"served two ways", schema.GroupKind{Kind: "ConfigMap"},
			rest.Subresource{Name: "both", Verbs: []string{"update"}, Serve: serve, Update: stamp{}}, "exactly one of Update, Serve and Scale"},
		{"served no way", schema.GroupKind{Kind: "ConfigMap"},
			rest.Subresource{Name: "none", Verbs: []string{"get"}}, "exactly one of Update, Serve and Scale"},
		{"no verbs", schema.GroupKind{Kind: "ConfigMap"},
			rest.Subresource{Name: "mute", Serve: serve}, "serves no verb"},
		{"documented as a create without a body", schema.GroupKind{Kind: "ConfigMap"},
			rest.Subresource{Name: "make", Verbs: []string{"create"}, Serve: serve, Document: rest.DocumentCreate}, "without a kind and body"},
		{"an alias that is a resource", schema.GroupKind{Kind: "Pod"},
			rest.Subresource{Name: "cm", Verbs: []string{"create"}, Serve: serve, Alias: "configmaps"}, "is also a resource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			strategies := registry.Strategies(registry.Config{})
			strategies[tc.kind] = withSubresources{Strategy: strategies[tc.kind], extra: []rest.Subresource{tc.sub}}
			if _, err := newRegistry(strategies); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("newRegistry: %v; want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := newRegistry(registry.Strategies(registry.Config{})); err != nil {
		t.Errorf("the served declarations: %v", err)
	}
}
