// Package horizontalpodautoscaler is the strategy of autoscaling/v2
// HorizontalPodAutoscalers: upstream's defaulting and validation
// (pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go) with the
// validation options that strategy computes for each request. dnsplane
// serves no metrics API, so kube-controller-manager's HPA controller can
// only report that it cannot get metrics (docs/apiserver.md).
package horizontalpodautoscaler

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
	"k8s.io/kubernetes/pkg/features"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the HorizontalPodAutoscaler strategy.
type Strategy struct {
	upstream.Strategy[autoscaling.HorizontalPodAutoscaler]
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
	_ rest.Declarative    = Strategy{}
)

// New returns the HorizontalPodAutoscaler strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[autoscaling.HorizontalPodAutoscaler]{
		Default: rest.Default{Status: true, Namespaced: true},
		Rules: upstream.Rules[autoscaling.HorizontalPodAutoscaler]{
			Validate: func(hpa *autoscaling.HorizontalPodAutoscaler) field.ErrorList {
				return autoscalingvalidation.ValidateHorizontalPodAutoscaler(hpa, options(hpa, nil))
			},
			ValidateUpdate: func(hpa, old *autoscaling.HorizontalPodAutoscaler) field.ErrorList {
				return autoscalingvalidation.ValidateHorizontalPodAutoscalerUpdate(hpa, old, options(hpa, old))
			},
			ValidateStatusUpdate: autoscalingvalidation.ValidateHorizontalPodAutoscalerStatusUpdate,
			// The declarative minReplicas rule follows the same gate.
			DeclarativeOptions: func() map[string]bool {
				return map[string]bool{string(features.HPAScaleToZero): utilfeature.DefaultFeatureGate.Enabled(features.HPAScaleToZero)}
			},
		},
	}}
}

// options are the ones upstream's validationOptionsForHorizontalPodAutoscaler
// computes: minReplicas may be 0 with HPAScaleToZero (on by default in
// 1.37) or when it already was; the target's apiVersion is not checked
// again when an update keeps it, and may have no group for a
// ReplicationController; object metrics already invalid stay allowed.
func options(hpa, old *autoscaling.HorizontalPodAutoscaler) autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions {
	opts := autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions{
		MinReplicasLowerBound:           1,
		ScaleTargetRefValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{RequiredCoveredByDeclarative: true},
		ObjectMetricsValidationOptions:  autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{AllowEmptyAPIGroup: true},
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.HPAScaleToZero) ||
		(old != nil && old.Spec.MinReplicas != nil && *old.Spec.MinReplicas == 0) {
		opts.MinReplicasLowerBound = 0
	}
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == hpa.Spec.ScaleTargetRef.APIVersion && old.Spec.ScaleTargetRef.Kind == hpa.Spec.ScaleTargetRef.Kind:
		opts.ScaleTargetRefValidationOptions.AllowInvalidAPIVersion = true
	case hpa.Spec.ScaleTargetRef.Kind == "ReplicationController":
		opts.ScaleTargetRefValidationOptions.AllowEmptyAPIGroup = true
	}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscaling.ObjectMetricSourceType && m.Object != nil &&
				autoscalingvalidation.ValidateAPIVersion(m.Object.DescribedObject, opts.ObjectMetricsValidationOptions) != nil {
				opts.ObjectMetricsValidationOptions.AllowInvalidAPIVersion = true
				break
			}
		}
	}
	return opts
}
