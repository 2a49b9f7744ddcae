package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// bobsRules is a stand-in for RBAC's rule resolver (internal/authz has
// the real one): bob may get pods in "team" and read /healthz.
var bobsRules = ruleResolverFunc(func(_ context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	if u.GetName() != "bob" || namespace != "team" {
		return nil, nil, false, nil
	}
	return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
		[]authorizer.NonResourceRuleInfo{&authorizer.DefaultNonResourceRuleInfo{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}, false, nil
})

type ruleResolverFunc func(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error)

func (f ruleResolverFunc) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return f(ctx, u, namespace)
}

// TestAccessReviews: SubjectAccessReview, LocalSubjectAccessReview and
// SelfSubjectRulesReview (kubectl auth can-i --as, kubectl auth can-i
// --list) answer with the server's authorizer and rule resolver through
// upstream's REST code, its validation included. Before, each was the 404
// "dnsplane does not serve …".
func TestAccessReviews(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := startRunning(ctx, t.TempDir(), Config{Authorizer: bobMayReadPods, RuleResolver: bobsRules})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Stop(context.Background()) })
	adminCfg, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(adminCfg).AuthorizationV1()

	pods := func(ns string) *authorizationv1.ResourceAttributes {
		return &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: ns}
	}
	for _, tc := range []struct {
		name    string
		user    string
		groups  []string
		attrs   *authorizationv1.ResourceAttributes
		allowed bool
	}{
		{"bob, his pods", "bob", nil, pods("team"), true},
		{"bob, other pods", "bob", nil, pods("default"), false},
		{"carol", "carol", nil, pods("team"), false},
		{"a master", "root", []string{"system:masters"}, &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "secrets"}, true},
	} {
		t.Run("SubjectAccessReview "+tc.name, func(t *testing.T) {
			got, err := admin.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: tc.user, Groups: tc.groups, ResourceAttributes: tc.attrs}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Allowed != tc.allowed || got.Spec.User != tc.user {
				t.Errorf("%+v, want allowed=%v", got, tc.allowed)
			}
		})
	}

	t.Run("LocalSubjectAccessReview", func(t *testing.T) {
		got, err := admin.LocalSubjectAccessReviews("team").Create(ctx, &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "team"},
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: pods("team")}}, metav1.CreateOptions{})
		if err != nil || !got.Status.Allowed || got.Namespace != "team" {
			t.Errorf("bob's pods in team: %+v, %v; want allowed", got, err)
		}
		// Upstream's validation: the review asks about its own namespace only.
		_, err = admin.LocalSubjectAccessReviews("team").Create(ctx, &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "team"},
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: pods("default")}}, metav1.CreateOptions{})
		if want := `spec.resourceAttributes.namespace: Invalid value: "default": must match metadata.namespace`; !apierrors.IsInvalid(err) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("another namespace: %v, want the 422 %q", err, want)
		}
	})

	t.Run("SubjectAccessReview validation", func(t *testing.T) {
		_, err := admin.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: pods("team")}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("no user: %v, want 422", err)
		}
	})

	t.Run("SelfSubjectRulesReview", func(t *testing.T) {
		bobCfg := rest.CopyConfig(adminCfg)
		bobCfg.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
		bob := kubernetes.NewForConfigOrDie(bobCfg).AuthorizationV1()
		got, err := bob.SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := authorizationv1.SubjectRulesReviewStatus{
			ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
			NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		}
		if len(got.Status.ResourceRules) != 1 || !slices.Equal(got.Status.ResourceRules[0].Resources, want.ResourceRules[0].Resources) ||
			len(got.Status.NonResourceRules) != 1 || !slices.Equal(got.Status.NonResourceRules[0].NonResourceURLs, want.NonResourceRules[0].NonResourceURLs) {
			t.Errorf("bob's rules %+v, want %+v", got.Status, want)
		}
		_, err = bob.SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{}, metav1.CreateOptions{})
		if want := "no namespace on request"; !apierrors.IsBadRequest(err) || err.Error() != want {
			t.Errorf("no namespace: %v, want the 400 %q", err, want)
		}
	})
}

// TestTokenReview: a TokenReview authenticates its token with the
// server's authenticators, as kube-apiserver's: the admin's static token
// and a bound service account token are good for the API server's
// audience, a service account token for another audience only when the
// review names it, and a bad token is not authenticated (with the
// authenticators' error), all through upstream's tokenreview REST. Before,
// the 404 of an unserved API.
func TestTokenReview(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	if _, err := ts.client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(auds ...string) string {
		tr, err := ts.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: auds}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	robot := "system:serviceaccount:" + ns + ":robot"
	robotGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	for _, tc := range []struct {
		name      string
		token     string
		audiences []string
		user      string
		groups    []string
		wantAuds  []string
	}{
		{"admin", ts.config.BearerToken, nil, "admin", []string{"system:masters", "system:authenticated"}, []string{testIssuer}},
		{"admin, another audience", ts.config.BearerToken, []string{"vault"}, "", nil, nil},
		{"service account", token(), nil, robot, robotGroups, []string{testIssuer}},
		{"service account, the issuer named", token(), []string{testIssuer}, robot, robotGroups, []string{testIssuer}},
		{"service account for vault, reviewed for the API server", token("vault"), nil, "", nil, nil},
		{"service account for vault, reviewed for vault", token("vault"), []string{"vault"}, robot, robotGroups, []string{"vault"}},
		{"bad token", "not-a-token", nil, "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ts.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tc.token, Audiences: tc.audiences}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := got.Status
			if st.Authenticated != (tc.user != "") || st.User.Username != tc.user || !slices.Equal(st.User.Groups, tc.groups) || !slices.Equal(st.Audiences, tc.wantAuds) {
				t.Errorf("status %+v, want user %q groups %v audiences %v", st, tc.user, tc.groups, tc.wantAuds)
			}
			if !st.Authenticated && st.Error == "" {
				t.Errorf("not authenticated without an error: %+v", st)
			}
			if got.Spec.Token != tc.token {
				t.Errorf("answer with token %q, want the TokenReview asked", got.Spec.Token)
			}
		})
	}
	// A protobuf client (client-go's ContentType, as kube's components
	// set it) sends and gets protobuf.
	pbCfg := rest.CopyConfig(ts.config)
	pbCfg.ContentType = "application/vnd.kubernetes.protobuf"
	pbCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	pb, err := kubernetes.NewForConfig(pbCfg)
	if err != nil {
		t.Fatal(err)
	}
	var contentType string
	got := &authenticationv1.TokenReview{}
	err = pb.AuthenticationV1().RESTClient().Post().Resource("tokenreviews").
		Body(&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: ts.config.BearerToken}}).
		Do(ctx).ContentType(&contentType).Into(got)
	if err != nil || contentType != "application/vnd.kubernetes.protobuf" || !got.Status.Authenticated || got.Status.User.Username != "admin" {
		t.Errorf("protobuf review of the admin's token: %s %+v, %v", contentType, got, err)
	}
	_, err = ts.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{})
	if want := "token is required for TokenReview in authentication"; !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("no token: %v, want the 400 %q", err, want)
	}
}

// TestReviewsDiscovery: discovery lists the reviews as kube-apiserver
// does, create only, in groups of their own; kubectl api-resources shows
// them and kubectl create -f finds them there. Before, neither group was
// listed.
func TestReviewsDiscovery(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	for gv, want := range map[string][]string{
		"authentication.k8s.io/v1": {"selfsubjectreviews", "tokenreviews"},
		"authorization.k8s.io/v1":  {"localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"},
	} {
		list, err := ts.client.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		var names []string
		for _, r := range list.APIResources {
			names = append(names, r.Name)
			if !slices.Equal(r.Verbs, []string{"create"}) || r.Namespaced != (r.Name == "localsubjectaccessreviews") {
				t.Errorf("%s %s: verbs %v namespaced %v", gv, r.Name, r.Verbs, r.Namespaced)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s lists %v, want %v", gv, names, want)
		}
	}
	groups, err := ts.client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	if i, j, k := slices.Index(names, "apps"), slices.Index(names, "authentication.k8s.io"), slices.Index(names, "authorization.k8s.io"); i < 0 || j != i+1 || k != j+1 {
		t.Errorf("groups %v: want authentication.k8s.io and authorization.k8s.io after apps", names)
	}
}

// FuzzReviews posts arbitrary bodies to every review, as any authenticated
// user may: upstream's decoding, conversion, validation and REST code must
// answer with a review or an API error, never panic, and a review answered
// is of the kind asked. Paths come from reviewFor, fuzzed here too: a kind
// it finds is namespaced exactly when the path names a namespace.
func FuzzReviews(f *testing.F) {
	f.Add("/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews",
		[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"team"},"spec":{"user":"bob","resourceAttributes":{"namespace":"team","verb":"get","resource":"pods"}}}`))
	f.Add("/apis/authentication.k8s.io/v1/tokenreviews", []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x","audiences":["a"]}}`))
	f.Add("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", []byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"team"}}`))
	f.Add("/apis/authorization.k8s.io/v1/subjectaccessreviews", []byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"bob","resourceAttributes":{"fieldSelector":{"rawSelector":"a=="}}}}`))
	f.Add("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x"}}`))
	f.Add("/apis/authentication.k8s.io/v1/selfsubjectreviews", []byte("\x00\x01"))
	srv, err := New(Config{Store: failingStore{}, Authorizer: bobMayReadPods, RuleResolver: bobsRules})
	if err != nil {
		f.Fatal(err)
	}
	ctx := authn.WithUser(context.Background(), authn.User{Name: "bob", Groups: []string{"system:authenticated"}})
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		k, namespace, ok := reviewFor(path)
		if !ok {
			return
		}
		if k.Namespaced != (namespace != "") {
			t.Fatalf("%q: %s with namespace %q", path, k.Plural, namespace)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "https://127.0.0.1"+path, bytes.NewReader(body)).WithContext(ctx)
		srv.serveReview(rec, req, k, namespace)
		switch rec.Code {
		case http.StatusCreated:
			var tm metav1.TypeMeta
			if err := json.Unmarshal(rec.Body.Bytes(), &tm); err != nil || tm.GroupVersionKind() != k.GVK {
				t.Fatalf("%s answered %s (%v), want a %s", path, rec.Body, err, k.GVK.Kind)
			}
		case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	})
}
