package apiserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

func getBody(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestHealthEndpoints checks the three health endpoints in kube's format.
// Before, the roots ignored ?verbose, a failure printed the etcd error on a
// public endpoint, and /livez/<check> and the like were not served (404).
// The roots are public; the single checks need credentials, as in kube, whose
// system:public-info-viewer role covers only the roots (system:monitoring
// has the checks).
func TestHealthEndpoints(t *testing.T) {
	ts := sharedServer(t)
	admin, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	anon, err := rest.HTTPClientFor(rest.AnonymousClientConfig(ts.config))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		client *http.Client
		path   string
		code   int
		body   string
	}{
		{"livez", anon, "/livez", 200, "ok"},
		{"readyz", anon, "/readyz", 200, "ok"},
		{"healthz", anon, "/healthz", 200, "ok"},
		{"livez verbose", anon, "/livez?verbose", 200, "[+]ping ok\n[+]etcd ok\nlivez check passed\n"},
		{"readyz verbose", anon, "/readyz?verbose=1", 200, "[+]ping ok\n[+]etcd ok\nreadyz check passed\n"},
		{"healthz exclude", anon, "/healthz?verbose&exclude=etcd&exclude=nope", 200,
			"[+]ping ok\n[+]etcd excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nhealthz check passed\n"},
		{"version/ is public", anon, "/version/", 200, ""},
		{"single check needs credentials", anon, "/livez/ping", 401, ""},
		{"single etcd check needs credentials", anon, "/readyz/etcd", 401, ""},
		{"livez/ping", admin, "/livez/ping", 200, "ok"},
		{"livez/etcd", admin, "/livez/etcd", 200, "ok"},
		{"readyz/etcd", admin, "/readyz/etcd", 200, "ok"},
		{"healthz/etcd", admin, "/healthz/etcd", 200, "ok"},
		{"unknown check", admin, "/livez/nope", 404, ""},
		{"trailing slash", admin, "/readyz/", 404, ""},
		{"nested", admin, "/healthz/etcd/x", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := getBody(t, tt.client, ts.run.URL+tt.path)
			if code != tt.code || (tt.body != "" && body != tt.body) {
				t.Errorf("got %d %q, want %d %q", code, body, tt.code, tt.body)
			}
		})
	}
}

// failingStore is a store whose etcd is unreachable.
type failingStore struct{ objectStore }

func (failingStore) CurrentRevision(context.Context) (int64, error) {
	return 0, errors.New("etcd unreachable")
}

// TestHealthEndpointsFailing checks a failed check withholds its reason on
// the public roots (it is logged) and gives it on the single check.
func TestHealthEndpointsFailing(t *testing.T) {
	srv, err := New(Config{Store: failingStore{}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	tests := []struct {
		path string
		code int
		body string
	}{
		{"/livez", 500, "[+]ping ok\n[-]etcd failed: reason withheld\nlivez check failed\n"},
		{"/readyz?verbose", 500, "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"},
		{"/healthz?exclude=etcd", 200, "ok"},
		{"/livez/ping", 200, "ok"},
		{"/livez/etcd", 500, "internal server error: etcd unreachable\n"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := getBody(t, hs.Client(), hs.URL+tt.path)
			if code != tt.code || body != tt.body {
				t.Errorf("got %d %q, want %d %q", code, body, tt.code, tt.body)
			}
		})
	}
}
