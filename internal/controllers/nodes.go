package controllers

import (
	"context"
	"fmt"

	lifecyclecontroller "k8s.io/kubernetes/pkg/controller/nodelifecycle"
	"k8s.io/kubernetes/pkg/controller/podgc"
	"k8s.io/kubernetes/pkg/controller/tainteviction"
	ttlcontroller "k8s.io/kubernetes/pkg/controller/ttl"
)

// nodeDescriptors are the controllers that watch nodes: an agent that
// stops renewing its Lease makes its Node Ready=Unknown and tainted, its
// pods not ready (so they leave EndpointSlices) and, after the 300 s
// tolerations the API server adds, evicted (docs/controllers.md, "Node
// lifecycle").
func nodeDescriptors() []Descriptor {
	return []Descriptor{
		{Name: "node-lifecycle-controller", Why: "marks a Node whose agent stopped renewing its Lease Ready=Unknown, taints it unreachable and marks its pods not ready", New: newNodeLifecycleController},
		{Name: "taint-eviction-controller", Why: "deletes pods from NoExecute-tainted nodes once their tolerations run out (300 s by default)", New: newTaintEvictionController},
		{Name: "pod-garbage-collector-controller", Why: "deletes pods bound to a Node that no longer exists, and terminated pods past the threshold", New: newPodGCController},
		{Name: "ttl-controller", Why: "sets the node.alpha.kubernetes.io/ttl annotation kubelet-style agents read for object cache TTLs", New: newTTLController},
	}
}

func newNodeLifecycleController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("node-controller")
	if err != nil {
		return nil, err
	}
	cfg := c.ComponentConfig.NodeLifecycleController
	nlc, err := lifecyclecontroller.NewNodeLifecycleController(ctx, c.Informers.Coordination().V1().Leases(), c.Informers.Core().V1().Pods(),
		c.Informers.Core().V1().Nodes(), c.Informers.Apps().V1().DaemonSets(), client,
		cfg.NodeMonitorPeriod.Duration, cfg.NodeStartupGracePeriod.Duration, cfg.NodeMonitorGracePeriod.Duration,
		cfg.NodeEvictionRate, cfg.SecondaryNodeEvictionRate, cfg.LargeClusterSizeThreshold, cfg.UnhealthyZoneThreshold)
	if err != nil {
		return nil, fmt.Errorf("node lifecycle controller: %w", err)
	}
	return nlc.Run, nil
}

func newTaintEvictionController(ctx context.Context, c *Context) (func(context.Context), error) {
	// kube-controller-manager gives it the node controller's identity.
	client, err := c.NewClient("node-controller")
	if err != nil {
		return nil, err
	}
	tc, err := tainteviction.New(ctx, client, c.Informers.Core().V1().Pods(), c.Informers.Core().V1().Nodes(), "taint-eviction-controller")
	if err != nil {
		return nil, fmt.Errorf("taint eviction controller: %w", err)
	}
	return tc.Run, nil
}

func newPodGCController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("pod-garbage-collector")
	if err != nil {
		return nil, err
	}
	gc := podgc.NewPodGC(ctx, client, c.Informers.Core().V1().Pods(), c.Informers.Core().V1().Nodes(),
		int(c.ComponentConfig.PodGCController.TerminatedPodGCThreshold))
	return gc.Run, nil
}

func newTTLController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("ttl-controller")
	if err != nil {
		return nil, err
	}
	tc := ttlcontroller.NewTTLController(ctx, c.Informers.Core().V1().Nodes(), client)
	return func(ctx context.Context) { tc.Run(ctx, 5) }, nil
}
