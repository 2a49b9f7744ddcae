package printers

import (
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var priorityClassKind = schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}

// priorityClassPrinter prints scheduling.k8s.io/v1 PriorityClasses with
// kube-apiserver's columns. Upstream does not mark PREEMPTIONPOLICY wide
// although it fills it only for -o wide (kube-apiserver always does).
func priorityClassPrinter() Printer {
	doc := schedulingv1.PriorityClass{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Value", "integer", doc["value"]),
			colPlain("Global-Default", "boolean", doc["globalDefault"]),
			colAge(),
			colPlain("PreemptionPolicy", "string", doc["preemptionPolicy"]),
		},
		func(o *schedulingv1.PriorityClass, now time.Time) []any {
			preemption := ""
			if o.PreemptionPolicy != nil {
				preemption = string(*o.PreemptionPolicy)
			}
			return []any{o.Name, int64(o.Value), o.GlobalDefault, cellAge(o.CreationTimestamp, now), preemption}
		},
	)
}
