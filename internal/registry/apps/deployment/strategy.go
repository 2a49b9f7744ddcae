// Package deployment is the strategy of apps/v1 Deployments: a pod template
// carrier (internal/registry/workload) validated as upstream's
// deploymentStrategy does (pkg/registry/apps/deployment/strategy.go).
package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// New returns the Deployment strategy with the pod DNS rules dns.
func New(dns validation.Options) workload.Strategy[apps.Deployment] {
	return workload.Strategy[apps.Deployment]{
		Strategy: upstream.Strategy[apps.Deployment]{
			Default: rest.Default{Status: true, Namespaced: true, GarbageCollection: genericrest.DeleteDependents},
			Rules: upstream.Rules[apps.Deployment]{
				Validate: func(d *apps.Deployment) field.ErrorList {
					return appsvalidation.ValidateDeployment(d, podutil.GetValidationOptionsFromPodTemplate(&d.Spec.Template, nil))
				},
				ValidateUpdate: func(d, old *apps.Deployment) field.ErrorList {
					return appsvalidation.ValidateDeploymentUpdate(d, old, podutil.GetValidationOptionsFromPodTemplate(&d.Spec.Template, &old.Spec.Template))
				},
				ValidateStatusUpdate: appsvalidation.ValidateDeploymentStatusUpdate,
			},
			View: view,
		},
		DNS:        dns,
		Generation: generationChanged,
	}
}

// generationChanged is upstream's rule for Deployments: a spec change, or
// an annotation change, since the controller copies the annotations to the
// ReplicaSets (pkg/registry/apps/deployment/strategy.go).
func generationChanged(obj, old any) bool {
	return rest.SpecChanged(obj, old) ||
		!apiequality.Semantic.DeepEqual(obj.(*dpappsv1.Deployment).Annotations, old.(*dpappsv1.Deployment).Annotations)
}

// view is the k8s.io/api Deployment sharing d's metadata, spec (the
// template's dnsParams aside) and status.
func view(obj any) (runtime.Object, func()) {
	d := obj.(*dpappsv1.Deployment)
	v := &appsv1.Deployment{ObjectMeta: d.ObjectMeta, Spec: d.Spec.DeploymentSpec, Status: d.Status}
	v.Spec.Template = workload.TemplateView(&d.Spec.Template)
	return v, func() {
		d.ObjectMeta, d.Status = v.ObjectMeta, v.Status
		workload.SetTemplate(&d.Spec.Template, v.Spec.Template)
		d.Spec.DeploymentSpec = v.Spec
		d.Spec.DeploymentSpec.Template = corev1.PodTemplateSpec{} // shadowed by d.Spec.Template
	}
}
