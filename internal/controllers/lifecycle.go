package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"
	pkgcontroller "k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
	resourcequotacontroller "k8s.io/kubernetes/pkg/controller/resourcequota"
	"k8s.io/kubernetes/pkg/controller/volume/pvcprotection"
	"k8s.io/kubernetes/pkg/controller/volume/pvprotection"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
)

// lifecycleDescriptors are the controllers that finish what a delete
// starts and keep usage counts: without them a namespace stays Terminating
// and an owner's dependents stay behind.
func lifecycleDescriptors() []Descriptor {
	return []Descriptor{
		{
			Name: "namespace-controller",
			Why:  "empties a Terminating namespace and removes its kubernetes finalizer through namespaces/finalize, so the API server can delete it",
			New:  newNamespaceController,
		},
		{
			Name: "garbage-collector-controller",
			Why:  "deletes dependents of deleted owners (background and foreground cascades) and orphans them for the orphan finalizer",
			New:  newGarbageCollector,
		},
		{
			Name: "resourcequota-controller",
			Why:  "keeps each ResourceQuota's status.used (counts and requests of the namespace's objects)",
			New:  newResourceQuotaController,
		},
		{
			Name: "persistentvolumeclaim-protection-controller",
			Why:  "holds a deleted PersistentVolumeClaim while a pod uses it (kubernetes.io/pvc-protection finalizer)",
			New:  newPVCProtectionController,
		},
		{
			Name: "persistentvolume-protection-controller",
			Why:  "holds a deleted PersistentVolume while a claim is bound to it (kubernetes.io/pv-protection finalizer)",
			New:  newPVProtectionController,
		},
	}
}

// newNamespaceController is kube-controller-manager's, with its defaults:
// 10 workers, a 5 minute resync, the kubernetes finalizer, and its client
// at 20 times the QPS and 100 times the burst of the others (it deletes
// everything in a namespace, a request per object).
func newNamespaceController(ctx context.Context, c *Context) (func(context.Context), error) {
	cfg, err := c.NewConfig("namespace-controller")
	if err != nil {
		return nil, err
	}
	cfg.QPS *= 20
	cfg.Burst *= 100
	client, err := newClientset(cfg, "namespace controller")
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("namespace controller metadata client: %w", err)
	}
	discover, err := firstDiscovery(ctx, client.Discovery().ServerPreferredNamespacedResources, time.Second)
	if err != nil {
		return nil, err
	}
	nc := namespacecontroller.NewNamespaceController(ctx, client, md, discover,
		c.Informers.Core().V1().Namespaces(), c.ComponentConfig.NamespaceController.NamespaceSyncPeriod.Duration, corev1.FinalizerKubernetes)
	workers := int(c.ComponentConfig.NamespaceController.ConcurrentNamespaceSyncs)
	return func(ctx context.Context) { nc.Run(ctx, workers) }, nil
}

// firstDiscovery returns discover with its first answer already fetched:
// upstream's NewNamespaceController exits the process when the discovery
// it makes while constructing finds no resource (initOpCache calls
// klog.FlushAndExit), which in dnsplane's process would end the API server
// and the DNS servers with it, say when the API server stops during
// start-up. The first answer is fetched here, retried every interval
// until it lists resources or ctx ends.
func firstDiscovery(ctx context.Context, discover func() ([]*metav1.APIResourceList, error), interval time.Duration) (func() ([]*metav1.APIResourceList, error), error) {
	var first []*metav1.APIResourceList
	var firstErr error
	err := wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) {
		first, firstErr = discover()
		return len(first) > 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("discovery for the namespace controller: %w", errors.Join(err, firstErr))
	}
	var mu sync.Mutex
	return func() ([]*metav1.APIResourceList, error) {
		mu.Lock()
		r, rerr := first, firstErr
		first, firstErr = nil, nil
		mu.Unlock()
		if r != nil {
			return r, rerr
		}
		return discover()
	}, nil
}

// newGarbageCollector is kube-controller-manager's, with its defaults: 20
// workers, events ignored, discovery synced every 30 s.
func newGarbageCollector(ctx context.Context, c *Context) (func(context.Context), error) {
	cfg, err := c.NewConfig("generic-garbage-collector")
	if err != nil {
		return nil, err
	}
	client, err := newClientset(cfg, "garbage collector")
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("garbage collector metadata client: %w", err)
	}
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, md, c.RESTMapper, garbagecollector.DefaultIgnoredResources(),
		c.ObjectOrMetadataInformers, c.InformersStarted)
	if err != nil {
		return nil, fmt.Errorf("garbage collector: %w", err)
	}
	workers := int(c.ComponentConfig.GarbageCollectorController.ConcurrentGCSyncs)
	const syncPeriod = 30 * time.Second
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		wg.Go(func() { gc.Run(ctx, workers, syncPeriod) })
		wg.Go(func() { gc.Sync(ctx, c.Discovery, syncPeriod) })
		wg.Wait()
	}, nil
}

// newResourceQuotaController is kube-controller-manager's: upstream's
// evaluators over the shared informers, discovery synced every 30 s.
func newResourceQuotaController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("resourcequota-controller")
	if err != nil {
		return nil, err
	}
	discover := client.Discovery().ServerPreferredNamespacedResources
	quota, err := quotainstall.NewQuotaConfigurationForControllers(generic.ListerFuncForResourceFunc(c.Informers.ForResource), c.Informers)
	if err != nil {
		return nil, fmt.Errorf("resource quota evaluators: %w", err)
	}
	rq, err := resourcequotacontroller.NewController(ctx, &resourcequotacontroller.ControllerOptions{
		QuotaClient:               client.CoreV1(),
		ResourceQuotaInformer:     c.Informers.Core().V1().ResourceQuotas(),
		ResyncPeriod:              pkgcontroller.StaticResyncPeriodFunc(c.ComponentConfig.ResourceQuotaController.ResourceQuotaSyncPeriod.Duration),
		InformerFactory:           c.ObjectOrMetadataInformers,
		ReplenishmentResyncPeriod: func() time.Duration { return resync },
		DiscoveryFunc:             discover,
		IgnoredResourcesFunc:      quota.IgnoredResources,
		InformersStarted:          c.InformersStarted,
		Registry:                  generic.NewRegistry(quota.Evaluators()),
		UpdateFilter:              quotainstall.DefaultUpdateFilter(),
	})
	if err != nil {
		return nil, fmt.Errorf("resource quota controller: %w", err)
	}
	workers := int(c.ComponentConfig.ResourceQuotaController.ConcurrentResourceQuotaSyncs)
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		wg.Go(func() { rq.Run(ctx, workers) })
		wg.Go(func() { rq.Sync(ctx, discover, 30*time.Second) })
		wg.Wait()
	}, nil
}

func newPVCProtectionController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("pvc-protection-controller")
	if err != nil {
		return nil, err
	}
	pc, err := pvcprotection.NewPVCProtectionController(klog.FromContext(ctx),
		c.Informers.Core().V1().PersistentVolumeClaims(), c.Informers.Core().V1().Pods(), client)
	if err != nil {
		return nil, fmt.Errorf("pvc protection controller: %w", err)
	}
	return func(ctx context.Context) { pc.Run(ctx, 1) }, nil
}

func newPVProtectionController(ctx context.Context, c *Context) (func(context.Context), error) {
	client, err := c.NewClient("pv-protection-controller")
	if err != nil {
		return nil, err
	}
	pc, err := pvprotection.NewPVProtectionController(klog.FromContext(ctx), c.Informers.Core().V1().PersistentVolumes(), client)
	if err != nil {
		return nil, fmt.Errorf("pv protection controller: %w", err)
	}
	return func(ctx context.Context) { pc.Run(ctx, 1) }, nil
}
