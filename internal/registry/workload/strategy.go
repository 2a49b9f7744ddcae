// Package workload is the strategy every kind that carries pod templates
// shares (Pod, PodTemplate, ReplicationController, Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job, CronJob): pod spec defaults, and the pod DNS
// rules with their ratchets (docs/pod-dns.md) for each pod spec the object
// carries, so that a template is held to what a pod made from it must meet.
package workload

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/internal/defaulting"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// Strategy is the strategy of a pod template carrier.
type Strategy struct {
	rest.Default
	// DNS are the pod DNS rules the feature gates enable.
	DNS validation.Options
}

var _ rest.Strategy = Strategy{}

// PrepareForCreate clears the status and defaults every pod spec.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Default.PrepareForCreate(ctx, obj)
	defaulting.PodSpecs(obj)
}

// PrepareForUpdate keeps the stored status and defaults every pod spec.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Default.PrepareForUpdate(ctx, obj, old)
	defaulting.PodSpecs(obj)
}

// Validate applies the pod DNS rules to every pod spec of a new object.
func (s Strategy) Validate(_ context.Context, obj any) field.ErrorList {
	return validation.ValidateObjectDNS(obj, nil, s.DNS)
}

// ValidateUpdate applies the pod DNS rules with the ratchets: a value the
// stored object already held stays accepted (KEP-4427).
func (s Strategy) ValidateUpdate(_ context.Context, obj, old any) field.ErrorList {
	return validation.ValidateObjectDNS(obj, old, s.DNS)
}
