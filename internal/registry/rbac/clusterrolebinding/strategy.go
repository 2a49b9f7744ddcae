// Package clusterrolebinding is the strategy of rbac.authorization.k8s.io/v1
// ClusterRoleBindings: cluster-scoped, upstream's defaulting and validation
// (pkg/registry/rbac/clusterrolebinding/strategy.go), and kube-apiserver's
// escalation check (package escalation): binding a role needs the `bind`
// verb on it or every permission it grants.
package clusterrolebinding

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rbac/escalation"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the ClusterRoleBinding strategy.
type Strategy struct {
	upstream.Strategy[rbac.ClusterRoleBinding]
	escalation *escalation.Checker
}

var _ rest.Admitter = Strategy{}

// New returns the ClusterRoleBinding strategy checking escalation with c
// (nil checks none).
func New(c *escalation.Checker) Strategy {
	return Strategy{Strategy: upstream.Strategy[rbac.ClusterRoleBinding]{Rules: upstream.Rules[rbac.ClusterRoleBinding]{
		Validate:       rbacvalidation.ValidateClusterRoleBinding,
		ValidateUpdate: rbacvalidation.ValidateClusterRoleBindingUpdate,
	}}, escalation: c}
}

// Admit refuses a binding its author may not make, before validation as
// kube-apiserver's policybased storage does.
func (s Strategy) Admit(ctx context.Context, obj, old any) error {
	b := obj.(*rbacv1.ClusterRoleBinding)
	w := escalation.Write{Resource: "clusterrolebindings", Name: b.Name, Object: b}
	if old != nil {
		w.Old = old.(*rbacv1.ClusterRoleBinding)
	}
	return s.escalation.Binding(ctx, w, b.RoleRef)
}
