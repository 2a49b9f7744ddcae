// Package deployment is the strategy of apps/v1 Deployments: a pod template
// carrier with upstream's Deployment spec defaults (replicas, strategy,
// revision history, progress deadline).
package deployment

import (
	"context"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	"github.com/dnsplane/dnsplane/internal/defaulting"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
)

// Strategy is the Deployment strategy.
type Strategy struct{ workload.Strategy }

var _ rest.Strategy = Strategy{}

// PrepareForCreate applies the workload defaults and the Deployment's own.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	defaulting.Deployment(&obj.(*dpappsv1.Deployment).Spec.DeploymentSpec)
}

// PrepareForUpdate applies the workload defaults and the Deployment's own.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	defaulting.Deployment(&obj.(*dpappsv1.Deployment).Spec.DeploymentSpec)
}
