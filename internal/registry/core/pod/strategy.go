// Package pod is the strategy of core/v1 Pods: a pod template carrier
// (internal/registry/workload) validated as upstream's podStrategy does
// (pkg/registry/core/pod/strategy.go), whose phase starts Pending, whose
// spec.dnsParams is as immutable as the rest of the pod spec, and that
// kubelet and kubectl select by node, phase and the other fields upstream's
// PodToSelectableFields offers.
package pod

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// Strategy is the Pod strategy.
type Strategy struct {
	workload.Strategy[core.Pod]
	// host is what the subresources (subresources.go) need of the API
	// server; nil (offline validation) reaches no node agent.
	host *host
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.StatusStrategy  = Strategy{}
	_ rest.FieldSelectable = Strategy{}
	_ rest.WatchIndexed    = Strategy{}
)

// New returns the Pod strategy with the pod DNS rules dns.
func New(dns validation.Options) Strategy {
	return Strategy{Strategy: workload.Strategy[core.Pod]{
		Strategy: upstream.Strategy[core.Pod]{
			Default: rest.Default{Status: true, Namespaced: true, ReturnDeletedObject: true},
			Rules: upstream.Rules[core.Pod]{
				Validate: func(p *core.Pod) field.ErrorList {
					return corevalidation.ValidatePodCreate(p, options(p, nil))
				},
				ValidateUpdate: func(p, old *core.Pod) field.ErrorList {
					return corevalidation.ValidatePodUpdate(p, old, options(p, old))
				},
				ValidateStatusUpdate: func(p, old *core.Pod) field.ErrorList {
					return corevalidation.ValidatePodStatusUpdate(p, old, options(p, old))
				},
			},
			View: view,
		},
		DNS: dns,
	}}
}

// options are the PodValidationOptions upstream's podStrategy computes.
func options(p, old *core.Pod) corevalidation.PodValidationOptions {
	var opts corevalidation.PodValidationOptions
	if old == nil {
		opts = podutil.GetValidationOptionsFromPodSpecAndMeta(&p.Spec, nil, &p.ObjectMeta, nil)
	} else {
		opts = podutil.GetValidationOptionsFromPodSpecAndMeta(&p.Spec, &old.Spec, &p.ObjectMeta, &old.ObjectMeta)
	}
	opts.ResourceIsPod = true
	return opts
}

// view is the k8s.io/api Pod sharing p's metadata, spec (dnsParams aside)
// and status.
func view(obj any) (runtime.Object, func()) {
	p := obj.(*dpcorev1.Pod)
	v := &corev1.Pod{ObjectMeta: p.ObjectMeta, Spec: p.Spec.PodSpec, Status: p.Status}
	return v, func() { p.ObjectMeta, p.Spec.PodSpec, p.Status = v.ObjectMeta, v.Spec, v.Status }
}

// PrepareForCreate clears the status a client sent, defaults the pod, starts
// it Pending and gives it its QoS class, as upstream's podStrategy does: the
// class is immutable afterwards, and /status writes are checked against it.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	p := obj.(*dpcorev1.Pod)
	if p.Status.Phase == "" {
		p.Status.Phase = corev1.PodPending
	}
	v, _ := view(p)
	p.Status.QOSClass = qos.GetPodQOS(v.(*corev1.Pod))
}

// PrepareForStatusUpdate defaults the pod and keeps the stored QoS class
// when the write leaves it out, as upstream's podStatusStrategy does for
// clients that drop the field.
func (s Strategy) PrepareForStatusUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForStatusUpdate(ctx, obj, old)
	if p := obj.(*dpcorev1.Pod); p.Status.QOSClass == "" {
		p.Status.QOSClass = old.(*dpcorev1.Pod).Status.QOSClass
	}
}

// ValidateUpdate is the workload update validation plus the one part of a
// pod spec upstream does not know: spec.dnsParams may not change on a pod
// update, like everything else in the spec but the fields upstream lists.
func (s Strategy) ValidateUpdate(ctx context.Context, obj, old any) field.ErrorList {
	errs := s.Strategy.ValidateUpdate(ctx, obj, old)
	p, o := obj.(*dpcorev1.Pod), old.(*dpcorev1.Pod)
	if !apiequality.Semantic.DeepEqual(p.Spec.DNSParams, o.Spec.DNSParams) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "dnsParams"), "pod updates may not change spec.dnsParams"))
	}
	return errs
}

// SelectableFields are the pod fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string {
	return []string{"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"}
}

// WatchIndexField is the field kube's watch cache indexes pods by: every
// kubelet (and here every node agent) watches spec.nodeName=<its node>.
func (Strategy) WatchIndexField() string { return "spec.nodeName" }

// FieldSet returns the selectable fields of a pod.
func (Strategy) FieldSet(obj any) fields.Set {
	p := obj.(*dpcorev1.Pod)
	return fields.Set{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             p.Status.PodIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}
