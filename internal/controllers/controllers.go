// Package controllers runs upstream kube-controller-manager controllers
// (k8s.io/kubernetes/pkg/controller/...) in the control plane's process,
// as clients of its API server. The API server leaves work to them as
// kube-apiserver does: a deleted namespace stays Terminating until the
// namespace controller has emptied it, and an object deleted with the
// orphan or foregroundDeletion finalizer stays until the garbage collector
// has dealt with its dependents (docs/apiserver.md, "Deletion" and
// "Namespaces"). Each controller is a Descriptor; the list grows with the
// controllers dnsplane runs (issue 20).
package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
)

// Client rates: kube-controller-manager's default of 20 requests a second
// caps a namespace's cleanup and a cascade's deletes (and pod creation, at
// ~20/s: ../shared/reference/controllers.md); the API server is in the
// same process, so the client need not protect it.
const (
	clientQPS   = 200
	clientBurst = 300
)

// resync is the informers' resync period, kube-controller-manager's
// --min-resync-period (it picks between it and twice it). Informers
// built without one refuse the namespace controller's own 5 minute resync.
const resync = 12 * time.Hour

// Context is what a controller's constructor gets: clients of the API
// server and the shared informers, started once every controller is built.
type Context struct {
	// Config is the clients' configuration; constructors copy it to set
	// their own user agent.
	Config *rest.Config
	Client kubernetes.Interface
	// Discovery is a discovery client of the controllers' own, uncached.
	Discovery discovery.DiscoveryInterface
	// RESTMapper maps kinds to resources through cached discovery, reset
	// every 30 s as kube-controller-manager resets it.
	RESTMapper *restmapper.DeferredDiscoveryRESTMapper
	Informers  informers.SharedInformerFactory
	// ObjectOrMetadataInformers gives typed informers for built-in kinds
	// and metadata-only ones for the rest (the garbage collector's).
	ObjectOrMetadataInformers informerfactory.InformerFactory
	// InformersStarted is closed once the informers are started.
	InformersStarted <-chan struct{}
}

// Descriptor is one controller: its name (kube-controller-manager's), why
// dnsplane runs it, and how to build it; the function New returns runs the
// controller until its context ends.
type Descriptor struct {
	Name string
	Why  string
	New  func(ctx context.Context, c *Context) (run func(context.Context), err error)
}

// Descriptors are the controllers the control plane runs, in start order.
func Descriptors() []Descriptor {
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
	}
}

// newNamespaceController is kube-controller-manager's, with its defaults:
// 10 workers, a 5 minute resync, the kubernetes finalizer.
func newNamespaceController(ctx context.Context, c *Context) (func(context.Context), error) {
	cfg := rest.CopyConfig(c.Config)
	rest.AddUserAgent(cfg, "namespace-controller")
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("namespace controller client: %w", err)
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
		c.Informers.Core().V1().Namespaces(), 5*time.Minute, corev1.FinalizerKubernetes)
	return func(ctx context.Context) { nc.Run(ctx, 10) }, nil
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
	cfg := rest.CopyConfig(c.Config)
	rest.AddUserAgent(cfg, "generic-garbage-collector")
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("garbage collector client: %w", err)
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
	const syncPeriod = 30 * time.Second
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		wg.Go(func() { gc.Run(ctx, 20, syncPeriod) })
		wg.Go(func() { gc.Sync(ctx, c.Discovery, syncPeriod) })
		wg.Wait()
	}, nil
}

// Component runs the Descriptors' controllers against the API server of a
// kubeconfig: a control plane component (internal/controlplane).
type Component struct {
	Kubeconfig string
	Logger     *slog.Logger
	// Descriptors overrides Descriptors() (tests); nil runs them all.
	Descriptors []Descriptor
}

// Name is the component's name in the control plane's logs.
func (*Component) Name() string { return "controllers" }

// Run builds every controller, starts the informers, and runs the
// controllers until ctx ends; it returns once all of them have stopped.
// Upstream's controllers log through klog's contextual logger, which is
// the component's slog logger here.
func (c *Component) Run(ctx context.Context) error {
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(log.Handler()))
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	rest.AddUserAgent(cfg, "dnsplane-controllers")
	cc, stop, err := newContext(cfg)
	if err != nil {
		return err
	}
	defer stop()
	descs := c.Descriptors
	if descs == nil {
		descs = Descriptors()
	}
	var runs []func(context.Context)
	for _, d := range descs {
		run, err := d.New(ctx, cc.Context)
		if err != nil && ctx.Err() != nil {
			// Stopped while starting.
			return nil
		}
		if err != nil {
			return fmt.Errorf("controllers: %s: %w", d.Name, err)
		}
		runs = append(runs, run)
	}
	cc.Informers.Start(ctx.Done())
	cc.ObjectOrMetadataInformers.Start(ctx.Done())
	close(cc.started)
	var wg sync.WaitGroup
	wg.Go(func() {
		// kube-controller-manager forgets cached discovery every 30 s.
		wait.UntilWithContext(ctx, func(context.Context) { cc.RESTMapper.Reset() }, 30*time.Second)
	})
	for i, run := range runs {
		log.Debug("starting controller", "controller", descs[i].Name)
		wg.Go(func() { run(ctx) })
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// startableContext is a Context with the channel Run closes once the
// informers are started.
type startableContext struct {
	*Context
	started chan struct{}
}

// newContext builds the clients and informer factories, as
// kube-controller-manager's CreateControllerContext does; stop shuts the
// informers down.
func newContext(cfg *rest.Config) (startableContext, func(), error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, fmt.Errorf("controllers: %w", err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, fmt.Errorf("controllers: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, fmt.Errorf("controllers: %w", err)
	}
	mapperDiscovery, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, fmt.Errorf("controllers: %w", err)
	}
	// The garbage collector resets the mapper when discovery changes; it
	// must not share the client Sync reads (garbagecollector.Sync's note).
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(mapperDiscovery))
	typed := informers.NewSharedInformerFactory(client, resync)
	metadataInformers := metadatainformer.NewSharedInformerFactoryWithOptions(md, resync, metadatainformer.WithTransform(dropManagedFields))
	started := make(chan struct{})
	cc := startableContext{
		Context: &Context{
			Config: cfg, Client: client, Discovery: dc, RESTMapper: mapper, Informers: typed,
			ObjectOrMetadataInformers: informerfactory.NewInformerFactory(typed, metadataInformers),
			InformersStarted:          started,
		},
		started: started,
	}
	return cc, func() { typed.Shutdown(); metadataInformers.Shutdown() }, nil
}

// dropManagedFields keeps managedFields out of the metadata informers'
// caches, which never read them, as kube-controller-manager trims them.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
