package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestReviews drives the review APIs with the real kubectl against the
// default --authorization-mode (Node,RBAC) and upstream's bootstrap
// policy: `kubectl auth can-i --list` (SelfSubjectRulesReview) for the
// admin and for a plain token user, who sees a Role once it is bound to
// them; `kubectl auth can-i --as` (impersonation, then the access review);
// a SubjectAccessReview and TokenReviews (of a `kubectl create token`
// token and of a bad one) through `kubectl create -f`, which finds them in
// discovery; and the create of a review is authorized like any request.
// Before, --list and both create -f were "dnsplane does not serve" 404s.
func TestReviews(t *testing.T) {
	requireKubectl(t)
	tokens := writeFile(t, "tokens.csv", "carol-token,carol,carol-uid\n")
	srv := startServer(t, t.TempDir(), "--token-auth-file", tokens)
	admin := srv.Kubeconfig
	carol := kubeconfigWithUser(t, admin, &clientcmdapi.AuthInfo{Token: "carol-token"})

	// The admin is in system:masters, bound to cluster-admin.
	if got := rowFor(mustKubectl(t, admin, "", "auth", "can-i", "--list"), "*.*"); !slices.Equal(got, []string{"*.*", "[]", "[]", "[*]"}) {
		t.Errorf("admin's can-i --list: the row of *.* is %q", got)
	}
	// carol gets what system:basic-user and system:discovery give every
	// authenticated user, and no secrets.
	list := mustKubectl(t, carol, "", "-n", "kube-system", "auth", "can-i", "--list")
	for _, want := range [][]string{
		{"selfsubjectreviews.authentication.k8s.io", "[]", "[]", "[create]"},
		{"selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"},
		{"selfsubjectrulesreviews.authorization.k8s.io", "[]", "[]", "[create]"},
	} {
		if got := rowFor(list, want[0]); !slices.Equal(got, want) {
			t.Errorf("carol's can-i --list: row %q, want %q\n%s", got, want, list)
		}
	}
	if got := rowFor(list, "secrets"); got != nil {
		t.Errorf("carol may do something to secrets before any binding: %q", got)
	}
	wantKubectl(t, admin, "", run{stdout: "no\n", exit: 1}, "auth", "can-i", "list", "secrets", "-n", "kube-system", "--as=carol")

	mustKubectl(t, admin, "", "-n", "kube-system", "create", "role", "secret-reader", "--verb=get,list", "--resource=secrets")
	mustKubectl(t, admin, "", "-n", "kube-system", "create", "rolebinding", "carol-reads-secrets", "--role=secret-reader", "--user=carol")
	// The rule resolver reads bindings through an informer.
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		out, stderr, _ := kubectl(t, carol, "", "-n", "kube-system", "auth", "can-i", "--list")
		return slices.Equal(rowFor(out, "secrets"), []string{"secrets", "[]", "[]", "[get", "list]"}), out + stderr
	})
	wantKubectl(t, admin, "", ok("yes"), "auth", "can-i", "list", "secrets", "-n", "kube-system", "--as=carol")
	wantKubectl(t, admin, "", run{stdout: "no\n", exit: 1}, "auth", "can-i", "list", "secrets", "-n", "default", "--as=carol")

	// A SubjectAccessReview asks about another user; only who may (the
	// admin, system:auth-delegator) may ask.
	sar := "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: carol\n  resourceAttributes: {verb: get, resource: secrets, namespace: kube-system}\n"
	wantKubectl(t, admin, sar, ok("true"), "create", "-f", "-", "-o", "jsonpath={.status.allowed}{\"\\n\"}")
	wantKubectl(t, admin, strings.Replace(sar, "verb: get", "verb: delete", 1), ok("false"), "create", "-f", "-", "-o", "jsonpath={.status.allowed}{\"\\n\"}")
	wantKubectl(t, carol, sar, failed(`Error from server (Forbidden): error when creating "STDIN": subjectaccessreviews.authorization.k8s.io is forbidden: User "carol" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`),
		"create", "-f", "-")

	// TokenReview: a token of kubectl create token is the service account,
	// a bad token is not authenticated.
	mustKubectl(t, admin, "", "-n", "default", "create", "serviceaccount", "robot")
	token := strings.TrimSpace(mustKubectl(t, admin, "", "-n", "default", "create", "token", "robot"))
	review := func(token string) authenticationv1.TokenReviewStatus {
		t.Helper()
		out := mustKubectl(t, admin, "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: "+token+"\n", "create", "-f", "-", "-o", "json")
		var tr authenticationv1.TokenReview
		if err := json.Unmarshal([]byte(out), &tr); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return tr.Status
	}
	if st := review(token); !st.Authenticated || st.User.Username != "system:serviceaccount:default:robot" ||
		!slices.Contains(st.User.Groups, "system:serviceaccounts:default") || len(st.Audiences) != 1 {
		t.Errorf("review of robot's token: %+v", st)
	}
	if st := review("not-a-token"); st.Authenticated || st.User.Username != "" || st.Error == "" {
		t.Errorf("review of a bad token: %+v, want not authenticated, with an error", st)
	}
	wantKubectl(t, carol, "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: x\n",
		failed(`Error from server (Forbidden): error when creating "STDIN": tokenreviews.authentication.k8s.io is forbidden: User "carol" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope`),
		"create", "-f", "-")
	wantKubectl(t, carol, "", ok("carol"), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}{\"\\n\"}")
}
