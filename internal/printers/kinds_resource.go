package printers

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Printers of resource.k8s.io/v1 (dynamic resource allocation), with the
// columns and cells of kube-apiserver's (pkg/printers/internalversion).

func resourceKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "resource.k8s.io", Kind: kind}
}

func deviceClassPrinter() Printer {
	return newPrinter([]metav1.TableColumnDefinition{colName(), colAge()},
		func(o *resourcev1.DeviceClass, now time.Time) []any {
			return []any{o.Name, cellAge(o.CreationTimestamp, now)}
		})
}

func resourceClaimTemplatePrinter() Printer {
	return newPrinter([]metav1.TableColumnDefinition{colName(), colAge()},
		func(o *resourcev1.ResourceClaimTemplate, now time.Time) []any {
			return []any{o.Name, cellAge(o.CreationTimestamp, now)}
		})
}

func resourceClaimPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
			colAge(),
		},
		func(o *resourcev1.ResourceClaim, now time.Time) []any {
			return []any{o.Name, resourceClaimState(o), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// resourceClaimState is STATE: deleted, then pending or allocated, and
// reserved when a consumer holds the claim.
func resourceClaimState(o *resourcev1.ResourceClaim) string {
	var states []string
	if o.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case o.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(o.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	case o.DeletionTimestamp == nil:
		states = append(states, "pending")
	}
	return strings.Join(states, ",")
}

func resourceSlicePrinter() Printer {
	spec := resourcev1.ResourceSliceSpec{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Node", "string", spec["nodeName"]),
			colPlain("Driver", "string", spec["driver"]),
			colPlain("Pool", "string", resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
			colAge(),
		},
		func(o *resourcev1.ResourceSlice, now time.Time) []any {
			return []any{o.Name, derefOr(o.Spec.NodeName, ""), o.Spec.Driver, o.Spec.Pool.Name, cellAge(o.CreationTimestamp, now)}
		},
	)
}

// deviceTaintRulePrinter prints the taint, not the (possibly long, CEL)
// device selector, as upstream does.
func deviceTaintRulePrinter() Printer {
	doc := resourcev1.DeviceTaint{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Key", "string", doc["key"]),
			colPlain("Value", "string", doc["value"]),
			colPlain("Effect", "string", doc["effect"]),
			colPlain("TimeAdded", "string", doc["timeAdded"]),
			colAge(),
		},
		func(o *resourcev1.DeviceTaintRule, now time.Time) []any {
			t := &o.Spec.Taint
			added := ""
			if t.TimeAdded != nil {
				added = cellAge(*t.TimeAdded, now)
			}
			return []any{o.Name, t.Key, t.Value, string(t.Effect), added, cellAge(o.CreationTimestamp, now)}
		},
	)
}
