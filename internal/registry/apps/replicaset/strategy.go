// Package replicaset is the strategy of apps/v1 ReplicaSets: a pod template
// carrier (internal/registry/workload) validated as upstream's rsStrategy
// does (pkg/registry/apps/replicaset/strategy.go).
package replicaset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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

// New returns the ReplicaSet strategy with the pod DNS rules dns.
func New(dns validation.Options) workload.Strategy[apps.ReplicaSet] {
	return workload.Strategy[apps.ReplicaSet]{
		Strategy: upstream.Strategy[apps.ReplicaSet]{
			Default: rest.Default{Status: true, Namespaced: true, GarbageCollection: genericrest.DeleteDependents},
			Rules: upstream.Rules[apps.ReplicaSet]{
				Validate: func(rs *apps.ReplicaSet) field.ErrorList {
					return appsvalidation.ValidateReplicaSet(rs, podutil.GetValidationOptionsFromPodTemplate(&rs.Spec.Template, nil))
				},
				ValidateUpdate: func(rs, old *apps.ReplicaSet) field.ErrorList {
					return appsvalidation.ValidateReplicaSetUpdate(rs, old, podutil.GetValidationOptionsFromPodTemplate(&rs.Spec.Template, &old.Spec.Template))
				},
				ValidateStatusUpdate: appsvalidation.ValidateReplicaSetStatusUpdate,
			},
			View: view,
		},
		DNS: dns,
	}
}

// view is the k8s.io/api ReplicaSet sharing rs's metadata, spec (the
// template's dnsParams aside) and status.
func view(obj any) (runtime.Object, func()) {
	rs := obj.(*dpappsv1.ReplicaSet)
	v := &appsv1.ReplicaSet{ObjectMeta: rs.ObjectMeta, Spec: rs.Spec.ReplicaSetSpec, Status: rs.Status}
	v.Spec.Template = workload.TemplateView(&rs.Spec.Template)
	return v, func() {
		rs.ObjectMeta, rs.Status = v.ObjectMeta, v.Status
		workload.SetTemplate(&rs.Spec.Template, v.Spec.Template)
		rs.Spec.ReplicaSetSpec = v.Spec
		rs.Spec.ReplicaSetSpec.Template = corev1.PodTemplateSpec{} // shadowed by rs.Spec.Template
	}
}
