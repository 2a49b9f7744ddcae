package e2e

import (
	"strings"
	"testing"
)

// TestKubectlUnserved checks what kubectl prints for APIs dnsplane does not
// serve: kube-apiserver's 404 NotFound Status, so kubectl handles it as
// with a server lacking the API, with a message naming what is not served
// and why (docs/apiserver.md, "What is not served") instead of "the server
// could not find the requested resource". auth whoami, which is served,
// still answers; auth can-i --list is served too (reviews_test.go).
func TestKubectlUnserved(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	mustKubectl(t, kc, podYAML("x", "1"), "-n", ns, "create", "-f", "-")

	const doc = " (docs/apiserver.md#what-is-not-served)"
	for _, tc := range []struct {
		args []string
		want run
	}{
		// Served, but say why there is nothing (docs/apiserver.md, "Exec,
		// attach and log").
		{[]string{"logs", "x"},
			failed("Error from server (BadRequest): dnsplane runs no containers: pod " + ns + "/x has no logs; use `dnsplane exec` or `kubectl exec` to run a command with the pod's DNS files")},
		{[]string{"exec", "x", "--", "ls"},
			failed("Error from server (BadRequest): pod x does not have a host assigned")},
		{[]string{"get", "--raw", "/api/v1/namespaces/" + ns + "/pods/x/proxy/"},
			failed("Error from server (NotFound): dnsplane does not serve pods/proxy: no pod runs, so there is nothing to proxy to" + doc)},
	} {
		wantKubectl(t, kc, "", tc.want, append([]string{"-n", ns}, tc.args...)...)
	}
	if out := mustKubectl(t, kc, "", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "admin" {
		t.Errorf("auth whoami: %q, want admin", out)
	}
}

// TestKubectlCreateToken: kubectl create token gets a service account
// token (docs/apiserver.md, "Service account tokens") that the server then
// accepts as the account; kube's minimum duration is enforced.
func TestKubectlCreateToken(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	mustKubectl(t, kc, "", "-n", ns, "create", "serviceaccount", "robot")
	token := strings.TrimSpace(mustKubectl(t, kc, "", "-n", ns, "create", "token", "robot", "--duration=10m"))
	if got := mustKubectl(t, kc, "", "--token="+token, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); got != "system:serviceaccount:"+ns+":robot" {
		t.Errorf("the token authenticates as %q", got)
	}
	wantKubectl(t, kc, "", failed(`error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes`),
		"-n", ns, "create", "token", "robot", "--duration=5m")
}
