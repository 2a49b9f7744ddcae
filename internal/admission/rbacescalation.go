package admission

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/internal/admission/escalation"
)

// rbacEscalation is kube-apiserver's RBAC privilege-escalation prevention
// (internal/admission/escalation): a Role or ClusterRole may grant only
// what its author holds, a binding may bind only such a role, unless the
// author may escalate or bind. kube-apiserver checks it in its RBAC kinds'
// policybased storage, after mutating admission and before validation;
// here it is the last mutating plugin, which is the same place.
type rbacEscalation struct {
	*kadmission.Handler
	check *escalation.Checker
}

var _ kadmission.MutationInterface = rbacEscalation{}

func newRBACEscalation(c *escalation.Checker) kadmission.Interface {
	return rbacEscalation{Handler: kadmission.NewHandler(kadmission.Create, kadmission.Update), check: c}
}

// Admit refuses a write its author may not make.
func (p rbacEscalation) Admit(ctx context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	old := a.GetOldObject()
	// The object's name, generated ones included: the attributes carry the
	// request's.
	w := escalation.Write{Resource: a.GetResource().Resource, Namespace: a.GetNamespace(), Name: objectName(a), Object: a.GetObject(), Old: old}
	switch o := a.GetObject().(type) {
	case *rbacv1.Role:
		return p.check.Role(ctx, w, o.Rules, false)
	case *rbacv1.ClusterRole:
		agg := aggregates(o)
		if old, ok := old.(*rbacv1.ClusterRole); ok {
			agg = agg || aggregates(old)
		}
		return p.check.Role(ctx, w, o.Rules, agg)
	case *rbacv1.RoleBinding:
		return p.check.Binding(ctx, w, o.RoleRef)
	case *rbacv1.ClusterRoleBinding:
		return p.check.Binding(ctx, w, o.RoleRef)
	}
	return nil
}

// aggregates reports whether r gathers other roles' rules.
func aggregates(r *rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}
