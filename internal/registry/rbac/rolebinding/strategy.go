// Package rolebinding is the strategy of rbac.authorization.k8s.io/v1
// RoleBindings: upstream's defaulting and validation
// (pkg/registry/rbac/rolebinding/strategy.go) and kube-apiserver's
// escalation check (package escalation): binding a Role or ClusterRole in a
// namespace needs the `bind` verb on it there, or every permission it
// grants there.
package rolebinding

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rbac/escalation"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the RoleBinding strategy.
type Strategy struct {
	upstream.Strategy[rbac.RoleBinding]
	escalation *escalation.Checker
}

var _ rest.Admitter = Strategy{}

// New returns the RoleBinding strategy checking escalation with c (nil
// checks none).
func New(c *escalation.Checker) Strategy {
	return Strategy{Strategy: upstream.Strategy[rbac.RoleBinding]{
		Default: rest.Default{Namespaced: true},
		Rules:   upstream.Rules[rbac.RoleBinding]{Validate: rbacvalidation.ValidateRoleBinding, ValidateUpdate: rbacvalidation.ValidateRoleBindingUpdate},
	}, escalation: c}
}

// Admit refuses a binding its author may not make, before validation as
// kube-apiserver's policybased storage does.
func (s Strategy) Admit(ctx context.Context, obj, old any) error {
	b := obj.(*rbacv1.RoleBinding)
	w := escalation.Write{Resource: "rolebindings", Namespace: b.Namespace, Name: b.Name, Object: b}
	if old != nil {
		w.Old = old.(*rbacv1.RoleBinding)
	}
	return s.escalation.Binding(ctx, w, b.RoleRef)
}
