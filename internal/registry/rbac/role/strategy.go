// Package role is the strategy of rbac.authorization.k8s.io/v1 Roles:
// upstream's defaulting and validation (pkg/registry/rbac/role/strategy.go).
// What a write may grant is the admission chain's RBACEscalation
// (internal/admission).
package role

import (
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the Role strategy.
type Strategy struct {
	upstream.Strategy[rbac.Role]
}

// New returns the Role strategy.
func New() Strategy {
	return Strategy{Strategy: upstream.Strategy[rbac.Role]{
		Default: rest.Default{Namespaced: true},
		Rules:   upstream.Rules[rbac.Role]{Validate: rbacvalidation.ValidateRole, ValidateUpdate: rbacvalidation.ValidateRoleUpdate},
	}}
}
