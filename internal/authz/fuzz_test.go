package authz

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// FuzzAttributes feeds request lines a client controls (method, path,
// query with selectors) to the attributes every request is authorized on:
// no panic, and a resource request sent with an HTTP method the API
// serves always has a verb (only a rule granting "*" matches an empty
// one, as in kube, whose RequestInfoFactory leaves it empty for other
// methods).
func FuzzAttributes(f *testing.F) {
	for _, seed := range [][3]string{
		{"GET", "/api/v1/namespaces/ns/pods", "watch=1&fieldSelector=spec.nodeName%3Dn1&labelSelector=a%3Db"},
		{"GET", "/api/v1/pods", "fieldSelector=metadata.name%3Dp"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments", ""},
		{"POST", "/api/v1/namespaces/ns/pods/p/exec", "command=id"},
		{"GET", "/api/v1/nodes/n1/proxy/a/b", ""},
		{"PATCH", "/apis/operator.dnsplane.io/v1/dnses/default/status", ""},
		{"GET", "/healthz/etcd", ""},
		{"GET", "/api/v1/namespaces/ns/pods", "fieldSelector=%%%&labelSelector=a+in+(b"},
		{"GET", "//api//v1", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	a := NewAttributer()
	f.Fuzz(func(t *testing.T, method, path, query string) {
		u, err := url.Parse("https://127.0.61.1" + path)
		if err != nil || u.Host != "127.0.61.1" {
			return
		}
		u.RawQuery = query
		r, err := http.NewRequest(method, u.String(), nil)
		if err != nil {
			return
		}
		attrs, err := a.Attributes(r, authn.User{Name: "fuzz", Groups: []string{authn.GroupAuthenticated}})
		if err != nil {
			return
		}
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			if attrs.GetVerb() == "" {
				t.Errorf("%s %s?%s: no verb: %+v", method, path, query, attrs)
			}
		}
	})
}
