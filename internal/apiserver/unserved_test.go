package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUnservedFor(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string // "" when the path is not in the table
	}{
		{"/api/v1/namespaces/ns/pods/x/portforward", "pods/portforward"},
		{"/api/v1/namespaces/ns/pods/x/proxy/healthz", "pods/proxy"},
		{"/api/v1/nodes/n1/proxy", "nodes/proxy"},
		{"/api/v1/nodes/n1/proxy/metrics/cadvisor", "nodes/proxy"},
		{"/api/v1/namespaces/ns/services/https:web:443/proxy/", "services/proxy"},

		{"/api/v1/namespaces/ns/pods/x", ""},
		{"/api/v1/namespaces/ns/pods/x/status", ""},
		{"/api/v1/namespaces/ns/pods/x/log", ""}, // served: internal/registry/core/pod
		{"/api/v1/namespaces/ns/pods/x/eviction", ""},
		{"/api/v1/namespaces/ns/pods/x/exec", ""},
		{"/api/v1/namespaces/ns/pods/x/attach", ""},
		{"/api/v1/namespaces/ns/pods", ""},
		{"/api/v1/namespaces/ns/pods/log", ""}, // the pod named log
		{"/api/v1/namespaces/log", ""},
		{"/api/v1", ""},
		{"/apis/authentication.k8s.io/v1/selfsubjectreviews", ""}, // kubectl auth whoami
		// The reviews are served (reviews.go).
		{"/apis/authorization.k8s.io/v1/subjectaccessreviews", ""},
		{"/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", ""},
		{"/apis/authorization.k8s.io/v1/namespaces/ns/localsubjectaccessreviews", ""},
		{"/apis/authorization.k8s.io/v1", ""},
		{"/apis/apps/v1/namespaces/ns/deployments/d/status", ""},
		{"/apis/v1/namespaces/ns/pods/x/log", ""}, // group "v1" is not core
		{"/version", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, what, ok := unservedFor(tc.path)
			if ok != (tc.want != "") || what != tc.want {
				t.Errorf("unservedFor(%q) = %q, %v; want %q", tc.path, what, ok, tc.want)
			}
		})
	}
}

// TestUnservedIsNotServed keeps the table honest: an API dnsplane comes to
// serve must leave it.
func TestUnservedIsNotServed(t *testing.T) {
	reg := NewRegistry()
	for _, e := range unservedAPIs {
		for _, res := range reg.Resources() {
			switch {
			case res.GVK.Group != e.group:
			case e.resource == anyResource:
				t.Errorf("%s is served (%s) and listed as not served", e.group, res.Plural)
			case res.Plural == e.resource && res.HasSubresource(e.subresource):
				t.Errorf("%s/%s is served and listed as not served", e.resource, e.subresource)
			}
		}
		for _, k := range reviewKinds {
			if k.GVK.Group == e.group && (e.resource == anyResource || e.resource == k.Plural) {
				t.Errorf("%s is served (reviews.go) and listed as not served", k.Plural)
			}
		}
	}
}

// TestUnservedStatus checks the answer on the wire: kube-apiserver's 404
// NotFound Status, whatever the method, with dnsplane's message.
func TestUnservedStatus(t *testing.T) {
	srv, err := New(Config{Store: failingStore{}})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	for _, tc := range []struct {
		method, path string
		message      string
	}{
		{http.MethodGet, "/api/v1/namespaces/default/pods/x/portforward?ports=80",
			"dnsplane does not serve pods/portforward: there are no containers to forward ports to (docs/apiserver.md#what-is-not-served)"},
		{http.MethodPost, "/api/v1/namespaces/default/pods/x/proxy/healthz",
			"dnsplane does not serve pods/proxy: no pod runs, so there is nothing to proxy to (docs/apiserver.md#what-is-not-served)"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}")))
			if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
			var s metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
				t.Fatal(err)
			}
			want := metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
				Message: tc.message, Details: &metav1.StatusDetails{},
			}
			if !reflect.DeepEqual(s, want) {
				t.Errorf("Status\n%s\nwant\n%+v", rec.Body, want)
			}
		})
	}
}
