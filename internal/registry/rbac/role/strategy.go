// Package role is the strategy of rbac.authorization.k8s.io/v1 Roles:
// upstream's defaulting and validation (pkg/registry/rbac/role/strategy.go)
// and kube-apiserver's escalation check (package escalation): a write may
// grant only what its author holds in the Role's namespace.
package role

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rbac/escalation"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the Role strategy.
type Strategy struct {
	upstream.Strategy[rbac.Role]
	escalation *escalation.Checker
}

var _ rest.Admitter = Strategy{}

// New returns the Role strategy checking escalation with c (nil checks
// none).
func New(c *escalation.Checker) Strategy {
	return Strategy{Strategy: upstream.Strategy[rbac.Role]{
		Default: rest.Default{Namespaced: true},
		Rules:   upstream.Rules[rbac.Role]{Validate: rbacvalidation.ValidateRole, ValidateUpdate: rbacvalidation.ValidateRoleUpdate},
	}, escalation: c}
}

// Admit refuses a Role granting more than its author holds, before
// validation as kube-apiserver's policybased storage does.
func (s Strategy) Admit(ctx context.Context, obj, old any) error {
	r := obj.(*rbacv1.Role)
	w := escalation.Write{Resource: "roles", Namespace: r.Namespace, Name: r.Name, Object: r}
	if old != nil {
		w.Old = old.(*rbacv1.Role)
	}
	return s.escalation.Role(ctx, w, r.Rules, false)
}
