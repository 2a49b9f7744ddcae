package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestImpersonationThroughTheServer impersonates with client-go's
// rest.Config.Impersonate, what kubectl --as, --as-group and --as-uid set,
// and asks the server who it is, as `kubectl auth whoami` does. Before, the
// headers were ignored (and there was no whoami): every request ran as the
// caller, and Impersonate-Group alone or anonymous impersonation answered 200.
func TestImpersonationThroughTheServer(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	whoami := func(t *testing.T, imp rest.ImpersonationConfig) authenticationv1.UserInfo {
		t.Helper()
		cfg := rest.CopyConfig(ts.config)
		cfg.Impersonate = imp
		c := kubernetes.NewForConfigOrDie(cfg)
		r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// An impersonated user can use the API like anyone authenticated.
		if _, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Errorf("get as %q: %v", imp.UserName, err)
		}
		return r.Status.UserInfo
	}

	self := whoami(t, rest.ImpersonationConfig{})
	if self.Username != "admin" || !slices.Contains(self.Groups, "system:masters") || !slices.Contains(self.Groups, "system:authenticated") {
		t.Errorf("admin is %+v", self)
	}
	got := whoami(t, rest.ImpersonationConfig{UserName: "bob", UID: "42", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"view"}}})
	want := authenticationv1.UserInfo{Username: "bob", UID: "42", Groups: []string{"devs", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"view"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("impersonated user %+v, want %+v", got, want)
	}
	got = whoami(t, rest.ImpersonationConfig{UserName: "system:serviceaccount:kube-system:coredns"})
	if want := []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}; !reflect.DeepEqual(got.Groups, want) {
		t.Errorf("service account groups %v, want %v", got.Groups, want)
	}

	admin, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	anon, err := rest.HTTPClientFor(rest.AnonymousClientConfig(ts.config))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		client  *http.Client
		method  string
		path    string
		headers map[string]string
		code    int
		msg     string
	}{
		{"group without user", admin, "GET", "/api/v1/namespaces", map[string]string{"Impersonate-Group": "admins"}, 400,
			`requested [groups "admins"] without impersonating a user: Impersonate-Group needs Impersonate-User`},
		{"anonymous on a public path", anon, "GET", "/healthz", map[string]string{"Impersonate-User": "admin"}, 403,
			`users "admin" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope`},
		{"anonymous elsewhere", anon, "GET", "/api/v1/namespaces", map[string]string{"Impersonate-User": "admin"}, 401, "Unauthorized"},
		{"whoami is create only", admin, "GET", "/apis/authentication.k8s.io/v1/selfsubjectreviews", nil, 405,
			`GET is not supported on resources of kind "selfsubjectreviews.authentication.k8s.io"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, ts.run.URL+tt.path, nil)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := tt.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var st metav1.Status
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != tt.code || int(st.Code) != tt.code || st.Message != tt.msg {
				t.Errorf("got %d %+v (%v), want %d %q", resp.StatusCode, st, err, tt.code, tt.msg)
			}
		})
	}
}
