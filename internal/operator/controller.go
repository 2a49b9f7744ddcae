package operator

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	dnsscheme "github.com/dnsplane/dnsplane/api/client/clientset/versioned/scheme"
	"github.com/dnsplane/dnsplane/api/client/informers/externalversions"
)

// resync is how often the informers replay their caches, so a missed or
// failed pass is retried even without a change; a pass that finds
// nothing to do writes nothing.
const resync = 10 * time.Minute

// EventComponent is the source of the events the operator records on the
// DNS object (in the namespace "default", as for every cluster-scoped
// object).
const EventComponent = "dns-operator"

// key is the work queue's only key: everything the operator watches
// feeds the one DNS object "default".
const key = "default"

// Controller runs the Reconciler whenever the DNS, or one of the objects
// it manages in dnsplane-system, changes.
type Controller struct {
	rec    *Reconciler
	queue  workqueue.TypedRateLimitingInterface[string]
	synced []cache.InformerSynced
	start  func(<-chan struct{})
	// health is read every rec.cfg.HealthInterval; nil reads none.
	health HealthSource
}

// NewController wires informers for the DNS (the generated informers)
// and for the ConfigMaps, Services and DaemonSets of dnsplane-system
// (client-go's) to a rate-limited work queue.
func NewController(cfg Config, kube kubernetes.Interface, dns versioned.Interface) (*Controller, error) {
	dnsFactory := externalversions.NewSharedInformerFactory(dns, resync)
	kubeFactory := informers.NewSharedInformerFactoryWithOptions(kube, resync, informers.WithNamespace(Namespace))
	dnsInf := dnsFactory.Operator().V1().DNSes()
	cmInf := kubeFactory.Core().V1().ConfigMaps()
	svcInf := kubeFactory.Core().V1().Services()
	dsInf := kubeFactory.Apps().V1().DaemonSets()
	l := Listers{DNS: dnsInf.Lister(), ConfigMaps: cmInf.Lister(), Services: svcInf.Lister()}
	informersToSync := []cache.SharedIndexInformer{dnsInf.Informer(), cmInf.Informer(), svcInf.Informer()}
	if cfg.Instances == nil {
		l.DaemonSets = dsInf.Lister()
		informersToSync = append(informersToSync, dsInf.Informer())
	}
	var broadcaster record.EventBroadcaster
	if cfg.Recorder == nil {
		// The core v1 events API: the broadcaster aggregates repeats of
		// an event into one Event with a count.
		broadcaster = record.NewBroadcaster()
		cfg.Recorder = broadcaster.NewRecorder(dnsscheme.Scheme, corev1.EventSource{Component: EventComponent})
	}
	rec, err := NewReconciler(cfg, kube, dns, l)
	if err != nil {
		return nil, err
	}
	health := cfg.Health
	if health == nil && cfg.ScrapePods {
		// Not waited for: an operator not allowed to list pods still
		// reconciles, it only finds no metrics endpoint (and logs why).
		podInf := kubeFactory.Core().V1().Pods()
		health = MetricsScraper{URLs: PodURLs(podInf.Lister())}
		podInf.Informer()
	}
	c := &Controller{
		rec: rec,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "dns-operator"}),
		start: func(stop <-chan struct{}) {
			dnsFactory.Start(stop)
			kubeFactory.Start(stop)
			if broadcaster != nil {
				broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
				go func() { <-stop; broadcaster.Shutdown() }()
			}
		},
		health: health,
	}
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.queue.Add(key) },
		UpdateFunc: func(any, any) { c.queue.Add(key) },
		DeleteFunc: func(any) { c.queue.Add(key) },
	}
	for _, inf := range informersToSync {
		if _, err := inf.AddEventHandler(enqueue); err != nil {
			return nil, fmt.Errorf("watching: %w", err)
		}
		c.synced = append(c.synced, inf.HasSynced)
	}
	return c, nil
}

// Enqueue asks for a pass, for changes the informers do not see (the
// in-process cluster DNS of `up` having applied a Corefile).
func (c *Controller) Enqueue() { c.queue.Add(key) }

// Run starts the informers and reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("operator: informer caches did not sync")
	}
	c.queue.Add(key)
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	if c.health != nil {
		go c.watchHealth(ctx)
	}
	for c.processNext(ctx) {
	}
	return nil
}

// watchHealth reads the forward health every interval and asks for a pass
// when a nameserver's health changed: the status is written on changes
// only.
func (c *Controller) watchHealth(ctx context.Context) {
	t := time.NewTicker(c.rec.cfg.HealthInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed, err := c.rec.ScrapeHealth(ctx, c.health)
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				c.rec.log.Warn("reading the cluster DNS's forward health failed; retrying every interval", "err", err)
			}
			failing = true
		case err == nil:
			failing = false
			if changed {
				c.queue.Add(key)
			}
		}
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	k, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(k)
	if err := c.rec.Reconcile(ctx); err != nil {
		switch {
		case ctx.Err() != nil:
		case apierrors.IsConflict(err):
			// The cache was behind a write (often the operator's own):
			// an ordinary retry, not a failure.
			c.rec.log.Debug("reconciling DNS met a newer object; retrying", "err", err)
		default:
			c.rec.log.Error("reconciling DNS failed; retrying", "err", err)
		}
		c.queue.AddRateLimited(k)
		return true
	}
	c.queue.Forget(k)
	if d := c.rec.RecheckAfter(); d > 0 {
		c.queue.AddAfter(k, d)
	}
	return true
}
