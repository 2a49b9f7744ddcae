package pod

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

var _ rest.GracefulDeleter = Strategy{}

// DefaultTerminationGracePeriodSeconds is what upstream's defaulting puts in
// spec.terminationGracePeriodSeconds when a pod names none
// (k8s.io/api/core/v1 DefaultTerminationGracePeriodSeconds).
const DefaultTerminationGracePeriodSeconds = corev1.DefaultTerminationGracePeriodSeconds

// GracePeriod is upstream's podStrategy.CheckGracefulDelete
// (pkg/registry/core/pod/strategy.go): the requested period, else the pod's
// terminationGracePeriodSeconds (else the default, 30); 0 for a pod no node
// runs (no spec.nodeName) or one that has finished; a negative period is 1.
func (Strategy) GracePeriod(_ context.Context, obj any, requested *int64) int64 {
	p := obj.(*dpcorev1.Pod)
	period := int64(DefaultTerminationGracePeriodSeconds)
	switch {
	case requested != nil:
		period = *requested
	case p.Spec.TerminationGracePeriodSeconds != nil:
		period = *p.Spec.TerminationGracePeriodSeconds
	}
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return 0
	}
	if period < 0 {
		return 1
	}
	return period
}
