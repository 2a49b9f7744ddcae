// Package operatorpolicy is the DNS operator's RBAC: what it reads and
// writes and nothing more, reconciled by the API server at every start next
// to upstream's bootstrap policy (docs/dns-operator.md#identity). Apart
// from internal/operator, which the control plane's tests link, so that
// the control plane can import it.
package operatorpolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/authz"
)

// RoleName names the operator's ClusterRole, its Role in Namespace and
// their bindings, in the system: prefix of upstream's bootstrap roles.
const RoleName = "system:dnsplane:dns-operator"

// Namespace is the operator's namespace (internal/operator.Namespace;
// TestPolicyNamespace keeps them equal).
const Namespace = "dnsplane-system"

// User is the operator's identity when `up` runs it (its client
// certificate's CN, docs/dns-operator.md#identity).
const User = "system:dnsplane:dns-operator"

// RBAC is what the operator does, and nothing more, as the API server
// reconciles it at every start next to upstream's bootstrap policy:
// cluster-wide the DNS resource and its status (reconcile.go, status.go),
// the Events it records on it (which land in "default", as events of a
// cluster-scoped object do) and its namespace (ensureNamespace reads and
// creates it); in Namespace the Corefile ConfigMap, the Service and the
// DaemonSet it writes and the pods it may scrape (controller.go).
func RBAC() (rbacv1.ClusterRole, rbacv1.ClusterRoleBinding, rbacv1.Role, rbacv1.RoleBinding) {
	group := operatorv1.SchemeGroupVersion.Group
	return authz.UserRoles{
		Name: RoleName, User: User, Namespace: Namespace,
		ClusterRules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("get", "list", "watch", "create", "update").Groups(group).Resources("dnses").RuleOrDie(),
			rbacv1helpers.NewRule("update", "patch").Groups(group).Resources("dnses/status").RuleOrDie(),
			rbacv1helpers.NewRule("create", "update", "patch").Groups("", "events.k8s.io").Resources("events").RuleOrDie(),
			rbacv1helpers.NewRule("create").Groups("").Resources("namespaces").RuleOrDie(),
			rbacv1helpers.NewRule("get").Groups("").Resources("namespaces").Names(Namespace).RuleOrDie(),
		},
		NamespaceRules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("get", "list", "watch", "create", "update", "delete").Groups("").Resources("configmaps", "services").RuleOrDie(),
			rbacv1helpers.NewRule("get", "list", "watch", "create", "update", "delete").Groups("apps").Resources("daemonsets").RuleOrDie(),
			rbacv1helpers.NewRule("get", "list", "watch").Groups("").Resources("pods").RuleOrDie(),
		},
	}.Objects()
}
