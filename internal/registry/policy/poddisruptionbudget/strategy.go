// Package poddisruptionbudget is the strategy of policy/v1
// PodDisruptionBudgets: upstream's defaulting and validation
// (pkg/registry/policy/poddisruptionbudget/strategy.go). The disruption
// controller of kube-controller-manager writes the status; dnsplane has no
// pods/eviction yet, so nothing consults a budget (docs/apiserver.md).
package poddisruptionbudget

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/policy"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the PodDisruptionBudget strategy.
type Strategy struct {
	upstream.Strategy[policy.PodDisruptionBudget]
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
	_ rest.Declarative    = Strategy{}
)

// New returns the PodDisruptionBudget strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[policy.PodDisruptionBudget]{
		Default: rest.Default{Status: true, Namespaced: true},
		Rules: upstream.Rules[policy.PodDisruptionBudget]{
			Validate: func(pdb *policy.PodDisruptionBudget) field.ErrorList {
				return policyvalidation.ValidatePodDisruptionBudget(pdb, policyvalidation.PodDisruptionBudgetValidationOptions{})
			},
			// Upstream checks an update as a create, tolerating a selector
			// label value that the stored budget already had wrong.
			ValidateUpdate: func(pdb, old *policy.PodDisruptionBudget) field.ErrorList {
				return policyvalidation.ValidatePodDisruptionBudget(pdb, policyvalidation.PodDisruptionBudgetValidationOptions{
					AllowInvalidLabelValueInSelector: invalidSelectorLabelValue(old),
				})
			},
			// Only policy/v1 is served, so the request's version is always it.
			ValidateStatusUpdate: func(pdb, old *policy.PodDisruptionBudget) field.ErrorList {
				return policyvalidation.ValidatePodDisruptionBudgetStatusUpdate(pdb.Status, old.Status, field.NewPath("status"), policyv1.SchemeGroupVersion)
			},
		},
	}}
}

// PrepareForCreate clears the status, applies the defaults and strips the
// policy/v1beta1 match-none label from a selector that carries it among
// other terms, as upstream's dropDisabledFields does.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	stripV1beta1Label(obj.(*policyv1.PodDisruptionBudget), nil)
}

// PrepareForUpdate keeps the status and applies the defaults; the selector
// is stripped only when it changed.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	stripV1beta1Label(obj.(*policyv1.PodDisruptionBudget), old.(*policyv1.PodDisruptionBudget))
}

// stripV1beta1Label is upstream's dropDisabledFields on the v1 object (the
// selector is a metav1.LabelSelector in both).
func stripV1beta1Label(pdb, old *policyv1.PodDisruptionBudget) {
	if old != nil && apiequality.Semantic.DeepEqual(old.Spec.Selector, pdb.Spec.Selector) {
		return
	}
	if apiequality.Semantic.DeepEqual(pdb.Spec.Selector, policy.NonV1beta1MatchNoneSelector) ||
		apiequality.Semantic.DeepEqual(pdb.Spec.Selector, policy.NonV1beta1MatchAllSelector) {
		return
	}
	policy.StripPDBV1beta1Label(pdb.Spec.Selector)
}

// invalidSelectorLabelValue is upstream's hasInvalidLabelValueInLabelSelector.
func invalidSelectorLabelValue(pdb *policy.PodDisruptionBudget) bool {
	if pdb.Spec.Selector == nil {
		return false
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}
	return len(metav1validation.ValidateLabelSelector(pdb.Spec.Selector, opts, nil)) > 0
}

// GenerationChanged is upstream's rule: a budget keeps metadata.generation,
// bumped when its spec changes, which the disruption controller reports
// back as status.observedGeneration (and eviction waits for).
func (Strategy) GenerationChanged(obj, old any) bool { return rest.SpecChanged(obj, old) }
