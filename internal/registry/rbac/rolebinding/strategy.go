// Package rolebinding is the strategy of rbac.authorization.k8s.io/v1
// RoleBindings: upstream's defaulting and validation
// (pkg/registry/rbac/rolebinding/strategy.go). What a binding may bind is
// the admission chain's RBACEscalation (internal/admission).
package rolebinding

import (
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the RoleBinding strategy.
type Strategy struct {
	upstream.Strategy[rbac.RoleBinding]
}

// New returns the RoleBinding strategy.
func New() Strategy {
	return Strategy{Strategy: upstream.Strategy[rbac.RoleBinding]{
		Default: rest.Default{Namespaced: true},
		Rules:   upstream.Rules[rbac.RoleBinding]{Validate: rbacvalidation.ValidateRoleBinding, ValidateUpdate: rbacvalidation.ValidateRoleBindingUpdate},
	}}
}
