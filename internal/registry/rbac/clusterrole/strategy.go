// Package clusterrole is the strategy of rbac.authorization.k8s.io/v1
// ClusterRoles: cluster-scoped, upstream's defaulting and validation with the
// options its strategy computes (pkg/registry/rbac/clusterrole/strategy.go).
// What a write may grant or aggregate is the admission chain's
// RBACEscalation (internal/admission).
package clusterrole

import (
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the ClusterRole strategy.
type Strategy struct {
	upstream.Strategy[rbac.ClusterRole]
}

// New returns the ClusterRole strategy.
func New() Strategy {
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
	}}}
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
