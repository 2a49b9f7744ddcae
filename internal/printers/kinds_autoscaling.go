package printers

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var hpaKind = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}

// horizontalPodAutoscalerPrinter prints autoscaling/v2
// HorizontalPodAutoscalers with kube-apiserver's columns. Upstream
// declares MAXPODS and REPLICAS string columns but fills them with
// integers; dnsplane prints what kube-apiserver prints.
func horizontalPodAutoscalerPrinter() Printer {
	spec := autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Reference", "string", spec["scaleTargetRef"]),
			colPlain("Targets", "string", spec["metrics"]),
			colPlain("MinPods", "string", spec["minReplicas"]),
			colPlain("MaxPods", "string", spec["maxReplicas"]),
			colPlain("Replicas", "string", autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]),
			colAge(),
		},
		func(o *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []any {
			minPods := "<unset>"
			if o.Spec.MinReplicas != nil {
				minPods = fmt.Sprint(*o.Spec.MinReplicas)
			}
			return []any{o.Name, o.Spec.ScaleTargetRef.Kind + "/" + o.Spec.ScaleTargetRef.Name,
				printHPATargets(o.Spec.Metrics, o.Status.CurrentMetrics), minPods, int64(o.Spec.MaxReplicas),
				int64(o.Status.CurrentReplicas), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// printHPATargets prints "current/target" for the first two metrics, then
// how many more there are. The i-th status is taken to be the i-th spec's,
// as upstream's printer does; "<unknown>" stands for a current value not
// (yet) reported.
func printHPATargets(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const shown = 2
	list := make([]string, 0, len(specs))
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, printHPATarget(spec, st))
	}
	if len(list) <= shown {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s + %d more...", strings.Join(list[:shown], ", "), len(list)-shown)
}

// printHPATarget prints one metric. An average-value target is marked
// "(avg)" for object and external metrics; resource metrics are prefixed
// with the resource name and, without an average value, compare
// utilisations ("<auto>" when no target utilisation is set).
func printHPATarget(spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			break
		}
		if t := spec.External.Target; t.AverageValue != nil {
			current := unknown
			if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
				current = st.External.Current.AverageValue.String()
			}
			return current + "/" + t.AverageValue.String() + " (avg)"
		}
		current := unknown
		if st != nil && st.External != nil {
			current = st.External.Current.Value.String()
		}
		return current + "/" + spec.External.Target.Value.String()
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			break
		}
		current := unknown
		if st != nil && st.Pods != nil {
			current = st.Pods.Current.AverageValue.String()
		}
		return current + "/" + spec.Pods.Target.AverageValue.String()
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			break
		}
		if t := spec.Object.Target; t.AverageValue != nil {
			current := unknown
			if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
				current = st.Object.Current.AverageValue.String()
			}
			return current + "/" + t.AverageValue.String() + " (avg)"
		}
		current := unknown
		if st != nil && st.Object != nil {
			current = st.Object.Current.Value.String()
		}
		return current + "/" + spec.Object.Target.Value.String()
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			break
		}
		var current *autoscalingv2.MetricValueStatus
		if st != nil && st.Resource != nil {
			current = &st.Resource.Current
		}
		return string(spec.Resource.Name) + ": " + printHPAResourceTarget(spec.Resource.Target, current)
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			break
		}
		var current *autoscalingv2.MetricValueStatus
		if st != nil && st.ContainerResource != nil {
			current = &st.ContainerResource.Current
		}
		return string(spec.ContainerResource.Name) + ": " + printHPAResourceTarget(spec.ContainerResource.Target, current)
	}
	return "<unknown type>"
}

// printHPAResourceTarget prints a (container) resource metric's
// current/target; current is nil when not reported.
func printHPAResourceTarget(target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	if target.AverageValue != nil {
		c := "<unknown>"
		if current != nil {
			c = current.AverageValue.String()
		}
		return c + "/" + target.AverageValue.String()
	}
	c, t := "<unknown>", "<auto>"
	if current != nil && current.AverageUtilization != nil {
		c = fmt.Sprintf("%d%%", *current.AverageUtilization)
	}
	if target.AverageUtilization != nil {
		t = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return c + "/" + t
}
