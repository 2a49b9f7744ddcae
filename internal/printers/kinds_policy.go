package printers

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var pdbKind = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}

// podDisruptionBudgetPrinter prints policy/v1 PodDisruptionBudgets with
// kube-apiserver's columns; an unset bound is N/A.
func podDisruptionBudgetPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Min Available", "string", "The minimum number of pods that must be available."),
			colPlain("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
			colPlain("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
			colAge(),
		},
		func(o *policyv1.PodDisruptionBudget, now time.Time) []any {
			minAvailable, maxUnavailable := "N/A", "N/A"
			if o.Spec.MinAvailable != nil {
				minAvailable = o.Spec.MinAvailable.String()
			}
			if o.Spec.MaxUnavailable != nil {
				maxUnavailable = o.Spec.MaxUnavailable.String()
			}
			return []any{o.Name, minAvailable, maxUnavailable, int64(o.Status.DisruptionsAllowed), cellAge(o.CreationTimestamp, now)}
		},
	)
}
