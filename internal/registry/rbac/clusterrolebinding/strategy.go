// Package clusterrolebinding is the strategy of rbac.authorization.k8s.io/v1
// ClusterRoleBindings: cluster-scoped, upstream's defaulting and validation
// (pkg/registry/rbac/clusterrolebinding/strategy.go). Stored only, like
// ClusterRoles: no authorization uses them yet and kube-apiserver's
// escalation check (a binding may grant only what its author holds, or
// needs the bind verb) is not made.
package clusterrolebinding

import (
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ClusterRoleBinding strategy.
func New() upstream.Strategy[rbac.ClusterRoleBinding] {
	return upstream.Strategy[rbac.ClusterRoleBinding]{Rules: upstream.Rules[rbac.ClusterRoleBinding]{
		Validate:       rbacvalidation.ValidateClusterRoleBinding,
		ValidateUpdate: rbacvalidation.ValidateClusterRoleBindingUpdate,
	}}
}
