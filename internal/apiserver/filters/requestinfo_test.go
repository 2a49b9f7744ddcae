package filters

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// testResolver reads requests as the API server's router does: with
// k8s.io/apiserver's RequestInfoFactory, except that a GET of one object
// with a true ?watch is a watch of it, as the server serves it
// (internal/apiserver request.go, verbFor).
var testResolver apirequest.RequestInfoResolver = serverLikeResolver{&apirequest.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}}

type serverLikeResolver struct {
	factory *apirequest.RequestInfoFactory
}

func (s serverLikeResolver) NewRequestInfo(r *http.Request) (*apirequest.RequestInfo, error) {
	info, err := s.factory.NewRequestInfo(r)
	if err != nil {
		return nil, err
	}
	if info.IsResourceRequest && info.Verb == "get" && isTrue(r.URL.Query().Get("watch")) {
		info.Verb = "watch"
	}
	return info, nil
}

func TestIsLongRunning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, target string
		want           bool
	}{
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=true", true},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=1&resourceVersion=5", true},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps/x?watch=true", true},
		{http.MethodGet, "/apis/apps/v1/deployments?watch=true&allowWatchBookmarks=true", true},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=false", false},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps?watch=0", false},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps", false},
		{http.MethodGet, "/api/v1/namespaces/a/configmaps/watch", false},
		{http.MethodPost, "/api/v1/namespaces/a/configmaps?watch=true", false},
		// kube's long-running subresources (none served yet).
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/log", true},
		{http.MethodPost, "/api/v1/namespaces/a/pods/p/exec", true},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/portforward", true},
		// An object named like a subresource is not one.
		{http.MethodGet, "/api/v1/namespaces/a/configmaps/log", false},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/status", false},
		{http.MethodGet, "/healthz", false},
		{http.MethodGet, "/healthz?watch=true", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		if got := isLongRunning(r, testResolver); got != tt.want {
			t.Errorf("%s %s: long-running = %v, want %v", tt.method, tt.target, got, tt.want)
		}
	}
}

// TestResolverErrorIsNotAResource: a request the resolver cannot read is
// left to the handler, which answers it; no filter classifies it.
func TestResolverErrorIsNotAResource(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/a/pods/p/log?watch=true", nil)
	if !isLongRunning(r, testResolver) {
		t.Fatal("the request is long-running when the resolver reads it")
	}
	if isLongRunning(r, failingResolver{}) {
		t.Error("a request the resolver failed on is long-running")
	}
}

type failingResolver struct{}

func (failingResolver) NewRequestInfo(*http.Request) (*apirequest.RequestInfo, error) {
	return nil, errors.New("unreadable")
}
