// Package podtemplate is the strategy of core/v1 PodTemplates: a pod
// template carrier (internal/registry/workload) validated as upstream's
// podTemplateStrategy does (pkg/registry/core/podtemplate/strategy.go).
package podtemplate

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// New returns the PodTemplate strategy with the pod DNS rules dns.
func New(dns validation.Options) workload.Strategy[core.PodTemplate] {
	return workload.Strategy[core.PodTemplate]{
		Strategy: upstream.Strategy[core.PodTemplate]{
			Default: rest.Default{Namespaced: true, ReturnDeletedObject: true},
			Rules: upstream.Rules[core.PodTemplate]{
				Validate: func(t *core.PodTemplate) field.ErrorList {
					return corevalidation.ValidatePodTemplate(t, podutil.GetValidationOptionsFromPodTemplate(&t.Template, nil))
				},
				ValidateUpdate: func(t, old *core.PodTemplate) field.ErrorList {
					return corevalidation.ValidatePodTemplateUpdate(t, old, podutil.GetValidationOptionsFromPodTemplate(&t.Template, &old.Template))
				},
			},
			View: view,
		},
		DNS: dns,
		// A PodTemplate has no spec: its template is what counts
		// (pkg/registry/core/podtemplate/strategy.go).
		Generation: func(obj, old any) bool { return rest.FieldChanged("Template", obj, old) },
	}
}

// view is the k8s.io/api PodTemplate sharing t's metadata and template
// (dnsParams aside).
func view(obj any) (runtime.Object, func()) {
	t := obj.(*dpcorev1.PodTemplate)
	v := &corev1.PodTemplate{ObjectMeta: t.ObjectMeta, Template: workload.TemplateView(&t.Template)}
	return v, func() {
		t.ObjectMeta = v.ObjectMeta
		workload.SetTemplate(&t.Template, v.Template)
	}
}
