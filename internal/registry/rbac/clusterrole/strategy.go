// Package clusterrole is the strategy of rbac.authorization.k8s.io/v1
// ClusterRoles: cluster-scoped, upstream's defaulting and validation with the
// options its strategy computes (pkg/registry/rbac/clusterrole/strategy.go),
// and kube-apiserver's escalation check (package escalation): a write may
// grant only what its author holds, and an aggregation rule needs
// cluster-admin's.
package clusterrole

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rbac/escalation"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the ClusterRole strategy.
type Strategy struct {
	upstream.Strategy[rbac.ClusterRole]
	escalation *escalation.Checker
}

var _ rest.Admitter = Strategy{}

// New returns the ClusterRole strategy checking escalation with c (nil
// checks none).
func New(c *escalation.Checker) Strategy {
	return Strategy{Strategy: upstream.Strategy[rbac.ClusterRole]{Rules: upstream.Rules[rbac.ClusterRole]{
		Validate: func(r *rbac.ClusterRole) field.ErrorList {
			return rbacvalidation.ValidateClusterRole(r, rbacvalidation.ClusterRoleValidationOptions{})
		},
		ValidateUpdate: func(r, old *rbac.ClusterRole) field.ErrorList {
			// A role stored before label values in selectors were checked
			// may keep its invalid ones.
			opts := rbacvalidation.ClusterRoleValidationOptions{AllowInvalidLabelValueInSelector: invalidSelector(old)}
			return rbacvalidation.ValidateClusterRoleUpdate(r, old, opts)
		},
	}}, escalation: c}
}

// Admit refuses a ClusterRole granting more than its author holds, before
// validation as kube-apiserver's policybased storage does.
func (s Strategy) Admit(ctx context.Context, obj, old any) error {
	r := obj.(*rbacv1.ClusterRole)
	w := escalation.Write{Resource: "clusterroles", Name: r.Name, Object: r}
	aggregates := hasAggregationRule(r)
	if old != nil {
		o := old.(*rbacv1.ClusterRole)
		w.Old = o
		aggregates = aggregates || hasAggregationRule(o)
	}
	return s.escalation.Role(ctx, w, r.Rules, aggregates)
}

func hasAggregationRule(r *rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

// invalidSelector reports whether an aggregation selector of r has a label
// value the strict selector rules refuse.
func invalidSelector(r *rbac.ClusterRole) bool {
	if r.AggregationRule == nil {
		return false
	}
	for i := range r.AggregationRule.ClusterRoleSelectors {
		if len(metav1validation.ValidateLabelSelector(&r.AggregationRule.ClusterRoleSelectors[i], metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
			return true
		}
	}
	return false
}
