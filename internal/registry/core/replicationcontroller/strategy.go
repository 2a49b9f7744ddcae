// Package replicationcontroller is the strategy of core/v1
// ReplicationControllers: a pod template carrier (internal/registry/workload)
// validated as upstream's rcStrategy does
// (pkg/registry/core/replicationcontroller/strategy.go).
package replicationcontroller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// New returns the ReplicationController strategy with the pod DNS rules
// dns.
//
// Upstream's ValidateUpdate also refuses changes to fields its v1
// conversion could not carry (NonConvertibleFields annotations); dnsplane
// stores v1 objects as sent, so there are none.
func New(dns validation.Options) workload.Strategy[core.ReplicationController] {
	return workload.Strategy[core.ReplicationController]{
		Strategy: upstream.Strategy[core.ReplicationController]{
			Default: rest.Default{Status: true, Namespaced: true, GarbageCollection: genericrest.OrphanDependents},
			Rules: upstream.Rules[core.ReplicationController]{
				Validate: func(rc *core.ReplicationController) field.ErrorList {
					return corevalidation.ValidateReplicationController(rc, podutil.GetValidationOptionsFromPodTemplate(rc.Spec.Template, nil))
				},
				ValidateUpdate: func(rc, old *core.ReplicationController) field.ErrorList {
					return corevalidation.ValidateReplicationControllerUpdate(rc, old, podutil.GetValidationOptionsFromPodTemplate(rc.Spec.Template, old.Spec.Template))
				},
				ValidateStatusUpdate: corevalidation.ValidateReplicationControllerStatusUpdate,
			},
			View: view,
		},
		DNS: dns,
	}
}

// view is the k8s.io/api ReplicationController sharing rc's metadata, spec
// (the template's dnsParams aside) and status.
func view(obj any) (runtime.Object, func()) {
	rc := obj.(*dpcorev1.ReplicationController)
	v := &corev1.ReplicationController{ObjectMeta: rc.ObjectMeta, Spec: rc.Spec.ReplicationControllerSpec, Status: rc.Status}
	v.Spec.Template = nil
	if rc.Spec.Template != nil {
		t := workload.TemplateView(rc.Spec.Template)
		v.Spec.Template = &t
	}
	return v, func() {
		rc.ObjectMeta, rc.Status = v.ObjectMeta, v.Status
		if v.Spec.Template != nil {
			if rc.Spec.Template == nil {
				rc.Spec.Template = &dpcorev1.PodTemplateSpec{}
			}
			workload.SetTemplate(rc.Spec.Template, *v.Spec.Template)
		}
		rc.Spec.ReplicationControllerSpec = v.Spec
		rc.Spec.ReplicationControllerSpec.Template = nil // shadowed by rc.Spec.Template
	}
}
