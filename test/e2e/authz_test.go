package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestAuthorization: with the default --authorization-mode (Node,RBAC)
// and upstream's bootstrap policy, a token that is not the admin's may ask
// who it is but not read Secrets in kube-system, exec, or impersonate,
// until a RoleBinding allows the read; kubectl prints kube-apiserver's
// messages, and `kubectl auth can-i` says so beforehand. Before, every authenticated user could do everything.
func TestAuthorization(t *testing.T) {
	requireKubectl(t)
	tokens := writeFile(t, "tokens.csv", "carol-token,carol,carol-uid\n")
	srv := startServer(t, t.TempDir(), "--token-auth-file", tokens)
	admin := srv.Kubeconfig
	carol := kubeconfigWithUser(t, admin, &clientcmdapi.AuthInfo{Token: "carol-token"})

	wantKubectl(t, carol, "", ok("carol"), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}{\"\\n\"}")
	wantKubectl(t, admin, "", ok("admin"), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}{\"\\n\"}")
	wantKubectl(t, admin, "", ok("secret/carol-may-read created"), "-n", "kube-system", "create", "secret", "generic", "carol-may-read", "--from-literal=k=v")

	wantKubectl(t, carol, "", run{stdout: "no\n", exit: 1}, "auth", "can-i", "list", "secrets", "-n", "kube-system")
	wantKubectl(t, admin, "", ok("yes"), "auth", "can-i", "*", "*")

	forbidden := `Error from server (Forbidden): secrets is forbidden: User "carol" cannot list resource "secrets" in API group "" in the namespace "kube-system"`
	wantKubectl(t, carol, "", failed(forbidden), "-n", "kube-system", "get", "secrets", "-o", "name")
	wantKubectl(t, carol, "", failed(`Error from server (Forbidden): pods "nosuch" is forbidden: User "carol" cannot get resource "pods" in API group "" in the namespace "kube-system"`),
		"-n", "kube-system", "exec", "nosuch", "--", "id")
	wantKubectl(t, carol, "", failed(`Error from server (Forbidden): users "admin" is forbidden: User "carol" cannot impersonate resource "users" in API group "" at the cluster scope`),
		"--as", "admin", "-n", "kube-system", "get", "secrets", "-o", "name")
	wantKubectl(t, carol, "", failed(`Error from server (Forbidden): dnses.operator.dnsplane.io "default" is forbidden: User "carol" cannot get resource "dnses" in API group "operator.dnsplane.io" at the cluster scope`),
		"get", "dnses.operator.dnsplane.io", "default", "-o", "name")

	mustKubectl(t, admin, "", "-n", "kube-system", "create", "role", "secret-reader", "--verb=get,list", "--resource=secrets")
	mustKubectl(t, admin, "", "-n", "kube-system", "create", "rolebinding", "carol-reads-secrets", "--role=secret-reader", "--user=carol")
	// The authorizer reads bindings through an informer: allowed once it
	// has seen the binding, a few milliseconds later.
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		out, stderr, exit := kubectl(t, carol, "", "-n", "kube-system", "get", "secrets", "-o", "name")
		return exit == 0 && strings.Contains(out, "secret/carol-may-read"), stderr
	})
	wantKubectl(t, carol, "", ok("yes"), "auth", "can-i", "list", "secrets", "-n", "kube-system")
	// Read only: the Role grants no delete.
	wantKubectl(t, carol, "", failed(`Error from server (Forbidden): secrets "carol-may-read" is forbidden: User "carol" cannot delete resource "secrets" in API group "" in the namespace "kube-system"`),
		"-n", "kube-system", "delete", "secret", "carol-may-read")

	// The bootstrap policy is upstream's: the roles kubectl users expect.
	for _, name := range []string{"clusterrole.rbac.authorization.k8s.io/cluster-admin", "clusterrole.rbac.authorization.k8s.io/system:node",
		"clusterrolebinding.rbac.authorization.k8s.io/system:public-info-viewer"} {
		kind, obj, _ := strings.Cut(name, "/")
		wantKubectl(t, admin, "", ok(name), "get", kind, obj, "-o", "name")
	}
}

// TestAuthorizationModeAlwaysAllow: --authorization-mode=AlwaysAllow is
// kube-apiserver's: every authenticated user may do everything.
func TestAuthorizationModeAlwaysAllow(t *testing.T) {
	requireKubectl(t)
	tokens := writeFile(t, "tokens.csv", "carol-token,carol,carol-uid\n")
	srv := startServer(t, t.TempDir(), "--token-auth-file", tokens, "--authorization-mode", "AlwaysAllow")
	carol := kubeconfigWithUser(t, srv.Kubeconfig, &clientcmdapi.AuthInfo{Token: "carol-token"})
	wantKubectl(t, carol, "", ok("namespace/kube-system"), "get", "namespace", "kube-system", "-o", "name")
	mustKubectl(t, carol, "", "-n", "kube-system", "get", "secrets")
	// AlwaysAllow's rules are everything (kubectl auth can-i --list).
	if got := rowFor(mustKubectl(t, carol, "", "auth", "can-i", "--list"), "*.*"); !slices.Equal(got, []string{"*.*", "[]", "[]", "[*]"}) {
		t.Errorf("carol's can-i --list under AlwaysAllow: the row of *.* is %q", got)
	}
}

// TestRBACEscalation: kube-apiserver's privilege-escalation prevention. A
// user allowed to write Roles and RoleBindings in a namespace may grant
// only what it holds there, until it may `escalate` roles or `bind` the
// role; kubectl prints kube's messages. Before, carol could bind
// cluster-admin to herself.
func TestRBACEscalation(t *testing.T) {
	requireKubectl(t)
	tokens := writeFile(t, "tokens.csv", "carol-token,carol,carol-uid\n")
	srv := startServer(t, t.TempDir(), "--token-auth-file", tokens)
	admin := srv.Kubeconfig
	carol := kubeconfigWithUser(t, admin, &clientcmdapi.AuthInfo{Token: "carol-token"})
	mustKubectl(t, admin, "", "create", "namespace", "team")
	mustKubectl(t, admin, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rbac-manager, namespace: team}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [roles, rolebindings], verbs: [create, get, list, update]}
- {apiGroups: [""], resources: [configmaps], verbs: [get, list]}
`, "apply", "-f", "-")
	mustKubectl(t, admin, "", "-n", "team", "create", "rolebinding", "carol-manages-rbac", "--role=rbac-manager", "--user=carol")
	waitCan := func(verb, resource string) {
		t.Helper()
		eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
			out, stderr, _ := kubectl(t, carol, "", "-n", "team", "auth", "can-i", verb, resource)
			return out == "yes\n", stderr
		})
	}
	waitCan("create", "roles")

	wantKubectl(t, carol, "", ok("role.rbac.authorization.k8s.io/config-reader created"),
		"-n", "team", "create", "role", "config-reader", "--verb=get", "--resource=configmaps")
	wantKubectl(t, carol, "", run{exit: 1, stderr: `Error from server (Forbidden): roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
		`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}` + "\n"},
		"-n", "team", "create", "role", "secret-reader", "--verb=get", "--resource=secrets")
	wantKubectl(t, carol, "", ok("rolebinding.rbac.authorization.k8s.io/bob-reads-config created"),
		"-n", "team", "create", "rolebinding", "bob-reads-config", "--role=config-reader", "--user=bob")
	// kubectl words a failed `create rolebinding` as its own error, unlike
	// `create role`.
	wantKubectl(t, carol, "", run{exit: 1, stderr: `error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "carol-is-admin" is forbidden: user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
		`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}` + "\n" + `{NonResourceURLs:["*"], Verbs:["*"]}` + "\n"},
		"-n", "team", "create", "rolebinding", "carol-is-admin", "--clusterrole=cluster-admin", "--user=carol")
	wantKubectl(t, carol, "", run{exit: 1, stderr: `error: failed to create rolebinding: roles.rbac.authorization.k8s.io "nosuch" not found` + "\n"},
		"-n", "team", "create", "rolebinding", "b", "--role=nosuch", "--user=bob")

	// bind on one named ClusterRole lets carol bind it, and only it.
	mustKubectl(t, admin, "", "-n", "team", "create", "role", "bind-view", "--verb=bind", "--resource=clusterroles.rbac.authorization.k8s.io", "--resource-name=view")
	mustKubectl(t, admin, "", "-n", "team", "create", "rolebinding", "carol-binds-view", "--role=bind-view", "--user=carol")
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		_, stderr, exit := kubectl(t, carol, "", "-n", "team", "create", "rolebinding", "bob-views", "--clusterrole=view", "--user=bob")
		return exit == 0, stderr
	})
	// Not edit: `dnsplane apiserver` runs no clusterrole-aggregation
	// controller, so the aggregated roles grant nothing here.
	if _, _, exit := kubectl(t, carol, "", "-n", "team", "create", "rolebinding", "carol-schedules", "--clusterrole=system:kube-scheduler", "--user=carol"); exit == 0 {
		t.Error("bind on view let carol bind system:kube-scheduler")
	}

	// escalate on roles lets carol write a role with what she lacks.
	mustKubectl(t, admin, "", "-n", "team", "create", "role", "escalate-roles", "--verb=escalate", "--resource=roles.rbac.authorization.k8s.io")
	mustKubectl(t, admin, "", "-n", "team", "create", "rolebinding", "carol-escalates", "--role=escalate-roles", "--user=carol")
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		_, stderr, exit := kubectl(t, carol, "", "-n", "team", "create", "role", "secret-reader", "--verb=get", "--resource=secrets")
		return exit == 0, stderr
	})
}
