// Package pod is the strategy of core/v1 Pods: a pod template carrier
// (internal/registry/workload) whose phase starts Pending and that kubelet
// and kubectl select by node, phase and the other fields upstream's
// PodToSelectableFields offers.
package pod

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
)

// Strategy is the Pod strategy.
type Strategy struct{ workload.Strategy }

var (
	_ rest.Strategy        = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// PrepareForCreate clears the status a client sent and starts the pod
// Pending, as upstream's podStrategy does.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	if p := obj.(*dpcorev1.Pod); p.Status.Phase == "" {
		p.Status.Phase = corev1.PodPending
	}
}

// SelectableFields are the pod fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string {
	return []string{"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"}
}

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
