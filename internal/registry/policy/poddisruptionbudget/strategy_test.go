package poddisruptionbudget

import (
	"context"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/apis/policy"
)

// TestV1beta1LabelStripped: the policy/v1beta1 match-none label is dropped
// from a selector that has other terms, as upstream's strategy drops it.
func TestV1beta1LabelStripped(t *testing.T) {
	t.Parallel()
	pdb := &policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: policy.PDBV1beta1Label, Operator: metav1.LabelSelectorOpExists},
		},
	}}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 3}}
	New().PrepareForCreate(context.Background(), pdb)
	if len(pdb.Spec.Selector.MatchExpressions) != 0 || pdb.Spec.Selector.MatchLabels["app"] != "web" {
		t.Errorf("selector %+v", pdb.Spec.Selector)
	}
	if pdb.Status.DisruptionsAllowed != 0 {
		t.Errorf("status kept on create: %+v", pdb.Status)
	}
}
