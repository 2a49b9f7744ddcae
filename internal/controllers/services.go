package controllers

import (
	"context"

	endpointcontroller "k8s.io/kubernetes/pkg/controller/endpoint"
	endpointslicecontroller "k8s.io/kubernetes/pkg/controller/endpointslice"
	endpointslicemirroringcontroller "k8s.io/kubernetes/pkg/controller/endpointslicemirroring"
)

// serviceDescriptors are the controllers that give Services their
// endpoints, which the cluster DNS serves: a headless Service's A and SRV
// records and its pods' hostname.subdomain names come from EndpointSlices.
func serviceDescriptors() []Descriptor {
	return []Descriptor{
		{Name: "endpointslice-controller", Why: "writes a Service's EndpointSlices from its selected pods: what the cluster DNS answers for headless Services and pod names", New: newEndpointSliceController},
		{Name: "endpoints-controller", Why: "writes a Service's v1 Endpoints (deprecated, still read by older clients)", New: newEndpointsController},
		{Name: "endpointslice-mirroring-controller", Why: "mirrors Endpoints written by hand (Services without a selector) into EndpointSlices", New: newEndpointSliceMirroringController},
	}
}

func newEndpointSliceController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("endpointslice-controller")
	if err != nil {
		return nil, err
	}
	cfg := c.ComponentConfig.EndpointSliceController
	esc := endpointslicecontroller.NewController(ctx, c.Informers.Core().V1().Pods(), c.Informers.Core().V1().Services(),
		c.Informers.Core().V1().Nodes(), c.Informers.Discovery().V1().EndpointSlices(), cfg.MaxEndpointsPerSlice, client,
		cfg.EndpointUpdatesBatchPeriod.Duration)
	return func(ctx context.Context) { esc.Run(ctx, int(cfg.ConcurrentServiceEndpointSyncs)) }, nil
}

func newEndpointsController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("endpoint-controller")
	if err != nil {
		return nil, err
	}
	cfg := c.ComponentConfig.EndpointController
	ec := endpointcontroller.NewEndpointController(ctx, c.Informers.Core().V1().Pods(), c.Informers.Core().V1().Services(),
		c.Informers.Core().V1().Endpoints(), client, cfg.EndpointUpdatesBatchPeriod.Duration)
	return func(ctx context.Context) { ec.Run(ctx, int(cfg.ConcurrentEndpointSyncs)) }, nil
}

func newEndpointSliceMirroringController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("endpointslicemirroring-controller")
	if err != nil {
		return nil, err
	}
	cfg := c.ComponentConfig.EndpointSliceMirroringController
	mc := endpointslicemirroringcontroller.NewController(ctx, c.Informers.Core().V1().Endpoints(), c.Informers.Discovery().V1().EndpointSlices(),
		c.Informers.Core().V1().Services(), cfg.MirroringMaxEndpointsPerSubset, client, cfg.MirroringEndpointUpdatesBatchPeriod.Duration)
	return func(ctx context.Context) { mc.Run(ctx, int(cfg.MirroringConcurrentServiceEndpointSyncs)) }, nil
}
