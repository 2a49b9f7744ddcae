// Package clusterrolebinding is the strategy of rbac.authorization.k8s.io/v1
// ClusterRoleBindings: cluster-scoped, upstream's defaulting and validation
// (pkg/registry/rbac/clusterrolebinding/strategy.go). What a binding may bind
// is the admission chain's RBACEscalation (internal/admission).
package clusterrolebinding

import (
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the ClusterRoleBinding strategy.
type Strategy struct {
	upstream.Strategy[rbac.ClusterRoleBinding]
}

// New returns the ClusterRoleBinding strategy.
func New() Strategy {
	return Strategy{Strategy: upstream.Strategy[rbac.ClusterRoleBinding]{Rules: upstream.Rules[rbac.ClusterRoleBinding]{
		Validate:       rbacvalidation.ValidateClusterRoleBinding,
		ValidateUpdate: rbacvalidation.ValidateClusterRoleBindingUpdate,
	}}}
}
