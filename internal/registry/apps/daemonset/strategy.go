// Package daemonset is the strategy of apps/v1 DaemonSets: a pod template
// carrier (internal/registry/workload) validated as upstream's
// daemonSetStrategy does (pkg/registry/apps/daemonset/strategy.go).
package daemonset

import (
	"context"
	"strconv"

	genericrest "k8s.io/apiserver/pkg/registry/rest"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
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

// Strategy is the DaemonSet strategy: the workload strategy plus the
// template generation upstream's daemonSetStrategy keeps.
type Strategy struct {
	workload.Strategy[apps.DaemonSet]
}

var _ rest.Strategy = Strategy{}

// templateGenerationAnnotation carries the internal spec.templateGeneration
// in apps/v1, where the field does not exist (upstream's v1 conversion).
const templateGenerationAnnotation = "deprecated.daemonset.template.generation"

// PrepareForCreate starts the template generation at 1, as upstream does.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	ds := obj.(*dpappsv1.DaemonSet)
	if g, err := strconv.ParseInt(ds.Annotations[templateGenerationAnnotation], 10, 64); err != nil || g < 1 {
		setTemplateGeneration(ds, 1)
	}
}

// PrepareForUpdate keeps the stored template generation and increments it
// when the pod template changed, as upstream's daemonSetStrategy does:
// clients may not set it, and the update validation requires the increment
// on every template change.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	ds, prev := obj.(*dpappsv1.DaemonSet), old.(*dpappsv1.DaemonSet)
	g, err := strconv.ParseInt(prev.Annotations[templateGenerationAnnotation], 10, 64)
	if err != nil {
		g = 0
	}
	if !apiequality.Semantic.DeepEqual(ds.Spec.Template, prev.Spec.Template) {
		g++
	}
	if g > 0 {
		setTemplateGeneration(ds, g)
	}
}

func setTemplateGeneration(ds *dpappsv1.DaemonSet, g int64) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[templateGenerationAnnotation] = strconv.FormatInt(g, 10)
}

// New returns the DaemonSet strategy with the pod DNS rules dns.
func New(dns validation.Options) Strategy {
	return Strategy{workload.Strategy[apps.DaemonSet]{
		Strategy: upstream.Strategy[apps.DaemonSet]{
			Default: rest.Default{Status: true, Namespaced: true, GarbageCollection: genericrest.DeleteDependents},
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
	}}
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
