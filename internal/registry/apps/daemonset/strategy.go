// Package daemonset is the strategy of apps/v1 DaemonSets: a pod template
// carrier (internal/registry/workload) validated as upstream's
// daemonSetStrategy does (pkg/registry/apps/daemonset/strategy.go).
package daemonset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// New returns the DaemonSet strategy with the pod DNS rules dns.
func New(dns validation.Options) workload.Strategy[apps.DaemonSet] {
	return workload.Strategy[apps.DaemonSet]{
		Strategy: upstream.Strategy[apps.DaemonSet]{
			Default: rest.Default{Status: true, Namespaced: true},
			Rules: upstream.Rules[apps.DaemonSet]{
				Validate: func(ds *apps.DaemonSet) field.ErrorList {
					return appsvalidation.ValidateDaemonSet(ds, podutil.GetValidationOptionsFromPodTemplate(&ds.Spec.Template, nil))
				},
				ValidateUpdate: func(ds, old *apps.DaemonSet) field.ErrorList {
					opts := podutil.GetValidationOptionsFromPodTemplate(&ds.Spec.Template, &old.Spec.Template)
					// A selector the stored object holds stays accepted.
					opts.AllowInvalidLabelValueInSelector = opts.AllowInvalidLabelValueInSelector || metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
					return appsvalidation.ValidateDaemonSetUpdate(ds, old, opts)
				},
				ValidateStatusUpdate: appsvalidation.ValidateDaemonSetStatusUpdate,
			},
			View: view,
		},
		DNS: dns,
	}
}

// view is the k8s.io/api DaemonSet sharing ds's metadata, spec (the
// template's dnsParams aside) and status.
func view(obj any) (runtime.Object, func()) {
	ds := obj.(*dpappsv1.DaemonSet)
	v := &appsv1.DaemonSet{ObjectMeta: ds.ObjectMeta, Spec: ds.Spec.DaemonSetSpec, Status: ds.Status}
	v.Spec.Template = workload.TemplateView(&ds.Spec.Template)
	return v, func() {
		ds.ObjectMeta, ds.Status = v.ObjectMeta, v.Status
		workload.SetTemplate(&ds.Spec.Template, v.Spec.Template)
		ds.Spec.DaemonSetSpec = v.Spec
		ds.Spec.DaemonSetSpec.Template = corev1.PodTemplateSpec{} // shadowed by ds.Spec.Template
	}
}
