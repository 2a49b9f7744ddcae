package apiserver

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/features"
)

// TestRoutesDocuments checks that Handler routes the discovery and OpenAPI
// paths to packages discovery and openapi/document with what the registry
// and the gates say: the packages' own tests cover the documents.
func TestRoutesDocuments(t *testing.T) {
	for _, tc := range []struct {
		gates           string
		fieldValidation bool
	}{
		{"", true},
		{"ServerSideFieldValidation=false", false},
	} {
		t.Run("gates="+tc.gates, func(t *testing.T) {
			gates, err := features.Parse(tc.gates)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := New(Config{Store: failingStore{}, Gates: gates})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()

			for path, want := range map[string]int{
				"/api": 200, "/api/": 200, "/apis": 200, "/apis/apps": 200, "/apis/apps/v1": 200, "/api/v1": 200,
				"/apis/nope": 404, "/apis/apps/v2": 404, "/api/v2": 404,
				"/openapi/v2": 200, "/openapi/v3": 200, "/openapi/v3/": 200, "/openapi/v3/api/v1": 200, "/openapi/v3/apis/nope/v1": 404,
			} {
				if code, body := getBody(t, hs.Client(), hs.URL+path); code != want {
					t.Errorf("GET %s: %d, want %d: %s", path, code, want, body)
				}
			}

			// PATCH of every kind lists strategic merge patch exactly for
			// the built-in kinds, and fieldValidation as the gate says.
			for _, res := range srv.reg.Resources() {
				_, body := getBody(t, hs.Client(), hs.URL+"/openapi/v3/"+openAPIKey(res))
				var doc struct {
					Paths map[string]struct {
						Patch *struct {
							Parameters  []oaParam `json:"parameters"`
							RequestBody struct {
								Content map[string]any `json:"content"`
							} `json:"requestBody"`
						} `json:"patch"`
					} `json:"paths"`
				}
				if err := json.Unmarshal([]byte(body), &doc); err != nil {
					t.Fatal(err)
				}
				found := false
				for path, item := range doc.Paths {
					if item.Patch == nil || !strings.Contains(path, "/"+res.Plural+"/{name}") {
						continue
					}
					found = true
					if _, ok := item.Patch.RequestBody.Content["application/strategic-merge-patch+json"]; ok != builtin(res) {
						t.Errorf("PATCH %s: strategic merge patch listed = %v", path, ok)
					}
					hasFV := slices.Contains(item.Patch.Parameters, oaParam{Name: "fieldValidation"})
					if hasFV != tc.fieldValidation {
						t.Errorf("PATCH %s: fieldValidation listed = %v", path, hasFV)
					}
				}
				if !found {
					t.Errorf("%s: no PATCH operation", res.Plural)
				}
			}
		})
	}
}

// oaParam is the name of an operation's parameter.
type oaParam struct {
	Name string `json:"name"`
}

// openAPIKey is the /openapi/v3 path of a resource's group/version.
func openAPIKey(res *Resource) string {
	if res.GVK.Group == "" {
		return "api/" + res.GVK.Version
	}
	return "apis/" + res.GVK.Group + "/" + res.GVK.Version
}
