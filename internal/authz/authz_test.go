package authz

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// cluster is a fake API with upstream's bootstrap policy, a RoleBinding
// letting dave read secrets in "team", and pods on two nodes.
func cluster(t testing.TB) *fake.Clientset {
	t.Helper()
	p := BootstrapPolicy()
	var objs []runtime.Object
	for i := range p.ClusterRoles {
		objs = append(objs, &p.ClusterRoles[i])
	}
	for i := range p.ClusterRoleBindings {
		objs = append(objs, &p.ClusterRoleBindings[i])
	}
	objs = append(objs,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader", Namespace: "team"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dave-reads-secrets", Namespace: "team"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secret-reader"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "dave"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "team"}, Spec: corev1.PodSpec{NodeName: "n1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "team"}, Spec: corev1.PodSpec{NodeName: "n2"}},
	)
	return fake.NewClientset(objs...)
}

// started builds modes over the fake cluster and waits until the
// authorizers have read it: the informers, and the node graph, which
// event handlers fill after the informers' stores.
func started(t testing.TB, modes []string) *Authorizer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(cluster(t), 0)
	a, err := New(modes, f)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	t.Cleanup(func() { cancel(); f.Shutdown() })
	node := &authorizer.AttributesRecord{User: UserInfo(authn.User{Name: "system:node:n1", Groups: []string{"system:nodes"}}),
		Verb: "get", Resource: "pods", Namespace: "team", Name: "p1", ResourceRequest: true}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if !a.HasSynced() {
			return false, nil
		}
		if !contains(modes, ModeNode) {
			return true, nil
		}
		d, _, _ := a.Authorize(ctx, node)
		return d == authorizer.DecisionAllow, nil
	})
	if err != nil {
		t.Fatalf("authorizers did not sync: %v", err)
	}
	return a
}

// writeStatus is the ErrorWriter of the tests: the Status as JSON.
func writeStatus(w http.ResponseWriter, _ *http.Request, err error) {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	authn.WriteStatus(w, se)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var (
	admin = authn.User{Name: "admin", Groups: []string{"system:masters", authn.GroupAuthenticated}}
	anon  = authn.User{Name: authn.UserAnonymous, Groups: []string{authn.GroupUnauthenticated}}
	bob   = authn.User{Name: "bob", Groups: []string{authn.GroupAuthenticated}}
	dave  = authn.User{Name: "dave", Groups: []string{authn.GroupAuthenticated}}
	node1 = authn.User{Name: "system:node:n1", Groups: []string{"system:nodes", authn.GroupAuthenticated}}
)

// TestFilterDecisions runs requests through Filter with Node,RBAC over
// upstream's bootstrap policy: the answers a kube-apiserver started with
// --authorization-mode=Node,RBAC gives (the union prefixes a reason with
// the authorizer's name, "node: "). Before, every authenticated request
// was allowed.
func TestFilterDecisions(t *testing.T) {
	t.Parallel()
	a := started(t, DefaultModes())
	h := Filter(a, writeStatus, slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	tests := []struct {
		name    string
		user    authn.User
		method  string
		path    string
		want    int
		wantMsg string
	}{
		{"admin reads kube-system secrets", admin, "GET", "/api/v1/namespaces/kube-system/secrets", 200, ""},
		{"admin execs", admin, "POST", "/api/v1/namespaces/team/pods/p1/exec?command=id", 200, ""},
		{"anonymous healthz (system:public-info-viewer)", anon, "GET", "/healthz", 200, ""},
		{"anonymous version", anon, "GET", "/version", 200, ""},
		{"anonymous health check below /readyz", anon, "GET", "/readyz/etcd", 403,
			`forbidden: User "system:anonymous" cannot get path "/readyz/etcd"`},
		{"anonymous pods", anon, "GET", "/api/v1/namespaces/default/pods", 403,
			`pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"`},
		{"plain user lists kube-system secrets", bob, "GET", "/api/v1/namespaces/kube-system/secrets", 403,
			`secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "kube-system"`},
		{"plain user gets a named secret", bob, "GET", "/api/v1/namespaces/kube-system/secrets/token", 403,
			`secrets "token" is forbidden: User "bob" cannot get resource "secrets" in API group "" in the namespace "kube-system"`},
		{"plain user watches", bob, "GET", "/api/v1/namespaces/team/pods?watch=1", 403,
			`pods is forbidden: User "bob" cannot watch resource "pods" in API group "" in the namespace "team"`},
		{"plain user deletes a collection", bob, "DELETE", "/apis/apps/v1/namespaces/team/deployments", 403,
			`deployments.apps is forbidden: User "bob" cannot deletecollection resource "deployments" in API group "apps" in the namespace "team"`},
		{"plain user execs", bob, "POST", "/api/v1/namespaces/team/pods/p1/exec", 403,
			`pods "p1" is forbidden: User "bob" cannot create resource "pods/exec" in API group "" in the namespace "team"`},
		{"plain user changes the DNS resource", bob, "PUT", "/apis/operator.dnsplane.io/v1/dnses/default", 403,
			`dnses.operator.dnsplane.io "default" is forbidden: User "bob" cannot update resource "dnses" in API group "operator.dnsplane.io" at the cluster scope`},
		{"plain user creates a pod in kube-system", bob, "POST", "/api/v1/namespaces/kube-system/pods", 403,
			`pods is forbidden: User "bob" cannot create resource "pods" in API group "" in the namespace "kube-system"`},
		{"plain user proxies to a node", bob, "GET", "/api/v1/nodes/n1/proxy/pods", 403,
			`nodes "n1" is forbidden: User "bob" cannot get resource "nodes/proxy" in API group "" at the cluster scope`},
		{"plain user whoami (system:basic-user)", bob, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", 200, ""},
		{"plain user discovery (system:discovery)", bob, "GET", "/apis", 200, ""},
		{"plain user openapi", bob, "GET", "/openapi/v3", 200, ""},
		{"plain user metrics", bob, "GET", "/metrics", 403, `forbidden: User "bob" cannot get path "/metrics"`},
		{"bound user reads secrets", dave, "GET", "/api/v1/namespaces/team/secrets", 200, ""},
		{"bound user reads a secret", dave, "GET", "/api/v1/namespaces/team/secrets/s", 200, ""},
		{"bound user may not write them", dave, "DELETE", "/api/v1/namespaces/team/secrets/s", 403,
			`secrets "s" is forbidden: User "dave" cannot delete resource "secrets" in API group "" in the namespace "team"`},
		{"bound user elsewhere", dave, "GET", "/api/v1/namespaces/kube-system/secrets", 403,
			`secrets is forbidden: User "dave" cannot list resource "secrets" in API group "" in the namespace "kube-system"`},
		{"node reads its own pod", node1, "GET", "/api/v1/namespaces/team/pods/p1", 200, ""},
		{"node reads another node's pod", node1, "GET", "/api/v1/namespaces/team/pods/p2", 403,
			`pods "p2" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" in the namespace "team": node: no relationship found between node 'n1' and this object`},
		{"node lists its own pods", node1, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", 200, ""},
		{"node lists another node's pods", node1, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn2", 403,
			`pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: node: can only list/watch pods with spec.nodeName field selector`},
		{"node reads secrets it has no pod for", node1, "GET", "/api/v1/namespaces/team/secrets/s", 403,
			`secrets "s" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "team": node: no relationship found between node 'n1' and this object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(tc.method, tc.path, nil)
			r = r.WithContext(authn.WithUser(r.Context(), tc.user))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("%s %s as %s: %d %s, want %d", tc.method, tc.path, tc.user.Name, w.Code, w.Body, tc.want)
			}
			if tc.wantMsg == "" {
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
				t.Fatalf("body %q: %v", w.Body, err)
			}
			if st.Message != tc.wantMsg || st.Reason != metav1.StatusReasonForbidden || st.Code != 403 {
				t.Errorf("status %+v\nwant message %q", st, tc.wantMsg)
			}
		})
	}
}

// TestWebsocketExecNeedsCreate: a GET that upgrades to exec is also
// authorized as create, as kube-apiserver does since 1.35, so a role
// granting only get on pods/exec runs no command.
func TestWebsocketExecNeedsCreate(t *testing.T) {
	t.Parallel()
	getOnly := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetVerb() == "get" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	h := Filter(getOnly, writeStatus, slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	for path, want := range map[string]int{
		"/api/v1/namespaces/team/pods/p1/exec?command=id": 403,
		"/api/v1/namespaces/team/pods/p1/attach":          403,
		"/api/v1/namespaces/team/pods/p1/portforward":     403,
		"/api/v1/namespaces/team/pods/p1/log":             200,
		"/api/v1/namespaces/team/pods/p1":                 200,
	} {
		r := httptest.NewRequest("GET", path, nil)
		r = r.WithContext(authn.WithUser(r.Context(), bob))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("GET %s: %d %s, want %d", path, w.Code, w.Body, want)
		}
	}
}

// TestImpersonationIsAuthorized: with RBAC, impersonating is the verb
// "impersonate" on what is named, which only system:masters holds in the
// bootstrap policy. Before, every authenticated user could impersonate
// anyone, system:masters included.
func TestImpersonationIsAuthorized(t *testing.T) {
	t.Parallel()
	may := Impersonation(started(t, []string{ModeRBAC}))
	ctx := context.Background()
	for _, tc := range []struct {
		actor authn.User
		req   authn.ImpersonationRequest
		want  bool
	}{
		{admin, authn.ImpersonationRequest{Resource: "users", Name: "bob"}, true},
		{admin, authn.ImpersonationRequest{Resource: "groups", Name: "system:masters"}, true},
		{bob, authn.ImpersonationRequest{Resource: "users", Name: "admin"}, false},
		{bob, authn.ImpersonationRequest{Resource: "groups", Name: "system:masters"}, false},
		{bob, authn.ImpersonationRequest{Resource: "serviceaccounts", Namespace: "kube-system", Name: "default"}, false},
		{bob, authn.ImpersonationRequest{Resource: "userextras", ExtraKey: "scopes", Name: "x"}, false},
		{anon, authn.ImpersonationRequest{Resource: "users", Name: "bob"}, false},
	} {
		if got := may(ctx, tc.actor, tc.req); got != tc.want {
			t.Errorf("%s impersonating %s: %v, want %v", tc.actor.Name, tc.req, got, tc.want)
		}
	}
}

// TestModes: each mode alone, and the privileged group before all of
// them, as kube-apiserver's union.
func TestModes(t *testing.T) {
	t.Parallel()
	secrets := func(u authn.User) *authorizer.AttributesRecord {
		return &authorizer.AttributesRecord{User: UserInfo(u), Verb: "list", Resource: "secrets", Namespace: "kube-system", ResourceRequest: true}
	}
	for _, tc := range []struct {
		modes     []string
		admin, bo authorizer.Decision
	}{
		{[]string{ModeAlwaysAllow}, authorizer.DecisionAllow, authorizer.DecisionAllow},
		// Upstream's AlwaysDeny has no opinion, so a later mode decides.
		{[]string{ModeAlwaysDeny}, authorizer.DecisionAllow, authorizer.DecisionNoOpinion},
		{[]string{ModeAlwaysDeny, ModeAlwaysAllow}, authorizer.DecisionAllow, authorizer.DecisionAllow},
		{[]string{ModeRBAC, ModeAlwaysAllow}, authorizer.DecisionAllow, authorizer.DecisionAllow},
		{[]string{ModeNode, ModeRBAC}, authorizer.DecisionAllow, authorizer.DecisionNoOpinion},
	} {
		a := started(t, tc.modes)
		ctx := context.Background()
		if d, _, _ := a.Authorize(ctx, secrets(admin)); d != tc.admin {
			t.Errorf("%v: admin %v, want %v", tc.modes, d, tc.admin)
		}
		if d, _, _ := a.Authorize(ctx, secrets(bob)); d != tc.bo {
			t.Errorf("%v: bob %v, want %v", tc.modes, d, tc.bo)
		}
	}
}

func TestValidateModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		modes []string
		want  string
	}{
		{[]string{"Node", "RBAC"}, ""},
		{[]string{"AlwaysAllow"}, ""},
		{nil, "at least one authorization-mode must be passed"},
		{[]string{"rbac"}, `authorization-mode "rbac" is not a valid mode`},
		{[]string{"RBAC", "RBAC"}, `authorization-mode ["RBAC" "RBAC"] has mode specified more than once`},
		{[]string{"Webhook"}, `authorization-mode "Webhook" is not supported by dnsplane: choose from AlwaysAllow,AlwaysDeny,Node,RBAC`},
	} {
		err := ValidateModes(tc.modes)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.modes, got, tc.want)
		}
	}
}

// TestBootstrapPolicyHasKubesDefaults names a few objects of upstream's
// policy that clients and docs rely on.
func TestBootstrapPolicyHasKubesDefaults(t *testing.T) {
	t.Parallel()
	p := BootstrapPolicy()
	names := map[string]bool{}
	for _, r := range p.ClusterRoles {
		names["clusterrole/"+r.Name] = true
	}
	for _, b := range p.ClusterRoleBindings {
		names["clusterrolebinding/"+b.Name] = true
	}
	for _, want := range []string{"clusterrole/cluster-admin", "clusterrole/system:public-info-viewer", "clusterrole/system:node",
		"clusterrole/admin", "clusterrole/view", "clusterrolebinding/cluster-admin", "clusterrolebinding/system:basic-user",
		"clusterrolebinding/system:controller:namespace-controller"} {
		if !names[want] {
			t.Errorf("bootstrap policy has no %s", want)
		}
	}
	if !strings.HasPrefix(p.ClusterRoles[0].Annotations[rbacv1.AutoUpdateAnnotationKey], "true") {
		t.Errorf("bootstrap roles carry no autoupdate annotation: %v", p.ClusterRoles[0].Annotations)
	}
}
