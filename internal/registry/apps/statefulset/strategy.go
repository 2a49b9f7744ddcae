// Package statefulset is the strategy of apps/v1 StatefulSets: a pod
// template carrier (internal/registry/workload) validated as upstream's
// statefulSetStrategy does (pkg/registry/apps/statefulset/strategy.go).
package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/features"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// New returns the StatefulSet strategy with the pod DNS rules dns.
func New(dns validation.Options) workload.Strategy[apps.StatefulSet] {
	return workload.Strategy[apps.StatefulSet]{
		Strategy: upstream.Strategy[apps.StatefulSet]{
			Default: rest.Default{Status: true, Namespaced: true, GarbageCollection: genericrest.DeleteDependents},
			Rules: upstream.Rules[apps.StatefulSet]{
				Validate: func(ss *apps.StatefulSet) field.ErrorList {
					setOpts := appsvalidation.StatefulSetValidationOptions{
						AllowStatefulSetRecreateStrategy: utilfeature.DefaultFeatureGate.Enabled(features.StatefulSetRecreateStrategy),
					}
					return appsvalidation.ValidateStatefulSet(ss, setOpts, podutil.GetValidationOptionsFromPodTemplate(&ss.Spec.Template, nil))
				},
				ValidateUpdate: func(ss, old *apps.StatefulSet) field.ErrorList {
					// Upstream tolerates on update what the stored object
					// may already hold: serviceName and volumeClaimTemplates
					// are immutable, and a Recreate strategy stays valid.
					setOpts := appsvalidation.StatefulSetValidationOptions{
						AllowInvalidServiceName:          true,
						SkipValidateVolumeClaimTemplates: true,
						AllowStatefulSetRecreateStrategy: utilfeature.DefaultFeatureGate.Enabled(features.StatefulSetRecreateStrategy) ||
							old.Spec.UpdateStrategy.Type == apps.RecreateStatefulSetStrategyType,
					}
					return appsvalidation.ValidateStatefulSetUpdate(ss, old, setOpts, podutil.GetValidationOptionsFromPodTemplate(&ss.Spec.Template, &old.Spec.Template))
				},
				ValidateStatusUpdate: appsvalidation.ValidateStatefulSetStatusUpdate,
			},
			View: view,
		},
		DNS: dns,
	}
}

// view is the k8s.io/api StatefulSet sharing ss's metadata, spec (the
// template's dnsParams aside) and status.
func view(obj any) (runtime.Object, func()) {
	ss := obj.(*dpappsv1.StatefulSet)
	v := &appsv1.StatefulSet{ObjectMeta: ss.ObjectMeta, Spec: ss.Spec.StatefulSetSpec, Status: ss.Status}
	v.Spec.Template = workload.TemplateView(&ss.Spec.Template)
	return v, func() {
		ss.ObjectMeta, ss.Status = v.ObjectMeta, v.Status
		workload.SetTemplate(&ss.Spec.Template, v.Spec.Template)
		ss.Spec.StatefulSetSpec = v.Spec
		ss.Spec.StatefulSetSpec.Template = corev1.PodTemplateSpec{} // shadowed by ss.Spec.Template
	}
}
