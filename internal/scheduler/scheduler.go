// Package scheduler runs upstream's kube-scheduler (k8s.io/kubernetes/pkg/scheduler)
// in dnsplane's process as a client of an API server: pods without a
// nodeName are bound to a node, with kube-scheduler's default profile,
// events and PodScheduled conditions (issue 20, docs/controllers.md).
//
// It calls the library, not cmd/kube-scheduler's command: the command runs
// on its own signal handler rather than a context, opens a serving port
// and exits the process when it loses its lease.
package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"

	"github.com/dnsplane/dnsplane/internal/leaderelect"
	"github.com/dnsplane/dnsplane/internal/shutdownlog"
)

// Client rates: kube-scheduler's default client (50/s) and client-go's
// (20/s) cap binding at that many pods a second
// (../shared/reference/controllers.md); the API server is dnsplane's own,
// in the same process under `up`, so the client need not protect it.
const (
	clientQPS   = 200
	clientBurst = 300
)

// The lease kube-scheduler elects its leader with: the same one, so that
// dnsplane's scheduler and a real kube-scheduler against the same API
// server never both schedule.
const (
	leaseNamespace = metav1.NamespaceSystem
	leaseName      = "kube-scheduler"
)

// Scheduler runs upstream's scheduler against the API server of a
// kubeconfig: `dnsplane scheduler`, and the scheduler role of `up`
// (internal/controlplane/schedulerrole).
type Scheduler struct {
	Kubeconfig string
	Logger     *slog.Logger
	// LeaderElect schedules only while holding the Lease
	// kube-system/kube-scheduler, as kube-scheduler --leader-elect, with
	// kube's timings (internal/leaderelect).
	LeaderElect bool
	// Identity is the lease holder's name; "" is kube-scheduler's
	// hostname_uuid.
	Identity string
}

// Name is the component's name in the control plane's logs.
func (*Scheduler) Name() string { return "scheduler" }

// ErrLeaseLost is what Run's error is (errors.Is) when another scheduler
// took the lease: kube-scheduler exits then, so that it never schedules
// alongside the new leader; the caller decides whether to start again.
var ErrLeaseLost = leaderelect.ErrLeaseLost

// Run schedules until ctx ends (nil) or the lease is lost (ErrLeaseLost);
// it returns once the scheduler and its informers have stopped. Upstream's
// scheduler logs through klog's contextual logger, which is the
// scheduler's slog logger here.
func (c *Scheduler) Run(ctx context.Context) error {
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	// A request cut short by the stop is not an error (internal/shutdownlog).
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(shutdownlog.New(log.Handler(), ctx.Done())))
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	// As kube-scheduler's client connection: compression costs CPU on
	// both ends for the lists of pods and nodes it reads.
	cfg.DisableCompression = true
	rest.AddUserAgent(cfg, "scheduler")
	return c.run(ctx, cfg, log)
}

// run builds the scheduler, syncs it, and schedules (once elected).
func (c *Scheduler) run(ctx context.Context, cfg *rest.Config, log *slog.Logger) error {
	// The informers run until this ends, not ctx: Run also returns when
	// the lease is lost, and stop waits for them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := c.newInstance(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer func() {
		cancel()
		s.stop()
	}()
	if err := s.sync(ctx, log); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if !c.LeaderElect {
		log.Info("scheduling", "leaderElect", false)
		s.sched.Run(ctx)
		return nil
	}
	// As kube-scheduler's Run with leader election on; the lease's events
	// go through the scheduler's broadcaster.
	err = leaderelect.Run(ctx, leaderelect.Config{Namespace: leaseNamespace, Name: leaseName, Identity: c.Identity, RESTConfig: cfg,
		EventRecorder: leaseEvents{s.broadcaster.NewRecorder(clientscheme.Scheme, corev1.DefaultSchedulerName)}, Logger: log},
		func(ctx context.Context) error {
			log.Info("scheduling", "leaderElect", true, "lease", leaseNamespace+"/"+leaseName)
			s.sched.Run(ctx)
			return nil
		})
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	return nil
}

// leaseEvents records the lease's LeaderElection events ("became leader",
// "stopped leading") through events.k8s.io, whose events also name an
// action; kube-scheduler records them as core events.
type leaseEvents struct{ r events.EventRecorder }

func (l leaseEvents) Eventf(obj runtime.Object, eventType, reason, message string, args ...any) {
	l.r.Eventf(obj, nil, eventType, reason, "LeaderElection", message, args...)
}

// instance is upstream's scheduler with what feeds it.
type instance struct {
	sched       *kubescheduler.Scheduler
	informers   informers.SharedInformerFactory
	dynamic     dynamicinformer.DynamicSharedInformerFactory
	broadcaster events.EventBroadcaster
}

// newInstance builds the scheduler as kube-scheduler's Setup does with no
// --config: the versioned KubeSchedulerConfiguration's defaults (New's
// default profile), an informer factory without resync, a dynamic one for
// the kinds plugins name by resource, and events through events.k8s.io.
// Events start flowing here; informers start in sync.
func (c *Scheduler) newInstance(ctx context.Context, cfg *rest.Config) (*instance, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	// Events go through events.k8s.io/v1, as kube-scheduler's. They stop
	// with ctx: the lease's "stopped leading" event is lost, as it is
	// when kube-scheduler exits.
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	// The informer name only labels informer metrics, which dnsplane does
	// not serve; a name is unique per process and tests run two.
	factory := kubescheduler.NewInformerFactory(client, 0, nil)
	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, corev1.NamespaceAll, nil)
	sched, err := kubescheduler.New(ctx, client, factory, dynFactory,
		func(name string) events.EventRecorderLogger {
			return broadcaster.NewRecorder(clientscheme.Scheme, name)
		},
		kubescheduler.WithComponentConfigVersion(configv1.SchemeGroupVersion.String()),
		kubescheduler.WithKubeConfig(cfg))
	if err != nil {
		broadcaster.Shutdown()
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		broadcaster.Shutdown()
		return nil, fmt.Errorf("scheduler: events: %w", err)
	}
	return &instance{sched: sched, informers: factory, dynamic: dynFactory, broadcaster: broadcaster}, nil
}

// sync starts the informers and waits for their caches and the
// scheduler's event handlers, before leader election as kube-scheduler
// (DelayCacheUntilActive false): a standby takes over with warm caches.
// A kind the API server does not serve never syncs and upstream waits
// silently; the kinds still unsynced are logged every syncReport.
func (s *instance) sync(ctx context.Context, log *slog.Logger) error {
	s.informers.Start(ctx.Done())
	s.dynamic.Start(ctx.Done())
	for {
		kinds, missing, err := s.waitForCaches(ctx)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			log.Debug("scheduler informers synced", "kinds", kinds)
			break
		}
		log.Warn("scheduler informers have not synced; is the kind served?", "kinds", missing, "after", syncReport)
	}
	if err := s.sched.WaitForHandlersSync(ctx); err != nil {
		return fmt.Errorf("scheduler: event handlers did not sync: %w", err)
	}
	return nil
}

// syncReport is how often sync names the informers it still waits for.
const syncReport = 30 * time.Second

// waitForCaches waits up to syncReport for the informers' caches and
// names the informers and those not synced by then.
func (s *instance) waitForCaches(ctx context.Context) (kinds, missing []string, err error) {
	wait, cancel := context.WithTimeout(ctx, syncReport)
	defer cancel()
	synced := s.informers.WaitForCacheSync(wait.Done())
	dynSynced := s.dynamic.WaitForCacheSync(wait.Done())
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	note := func(name string, ok bool) {
		kinds = append(kinds, name)
		if !ok {
			missing = append(missing, name)
		}
	}
	for t, ok := range synced {
		note(t.String(), ok)
	}
	for gvr, ok := range dynSynced {
		note(gvr.String(), ok)
	}
	slices.Sort(kinds)
	slices.Sort(missing)
	return kinds, missing, nil
}

// stop waits for the informers' goroutines and drops unsent events.
func (s *instance) stop() {
	s.informers.Shutdown()
	s.dynamic.Shutdown()
	s.broadcaster.Shutdown()
}
