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
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"

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

// kube-scheduler's lease timing (componentbaseconfig's defaults).
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
)

// Component runs the scheduler against the API server of a kubeconfig: a
// control plane component (internal/controlplane), and `dnsplane scheduler`.
type Component struct {
	Kubeconfig string
	Logger     *slog.Logger
	// LeaderElect schedules only while holding the Lease
	// kube-system/kube-scheduler, as kube-scheduler --leader-elect.
	LeaderElect bool
	// Identity is the lease holder's name; "" is kube-scheduler's
	// hostname_uuid.
	Identity string
	// RestartOnLeaseLoss makes Run stand by for the lease again when it
	// loses it, instead of returning ErrLeaseLost: for a process whose
	// other components must not stop with the scheduler (`dnsplane up`,
	// where a component's error ends the process, DNS servers included,
	// and a renewal can miss its deadline under load).
	RestartOnLeaseLoss bool
}

// Name is the component's name in the control plane's logs.
func (*Component) Name() string { return "scheduler" }

// ErrLeaseLost is Run's error when another scheduler took the lease:
// kube-scheduler exits then, so that it never schedules alongside the new
// leader; the caller decides whether to start again.
var ErrLeaseLost = errors.New("scheduler: lost the lease " + leaseNamespace + "/" + leaseName)

// Run schedules until ctx ends (nil) or the lease is lost (ErrLeaseLost,
// unless RestartOnLeaseLoss); it returns once the scheduler and its
// informers have stopped. Upstream's
// scheduler logs through klog's contextual logger, which is the
// component's slog logger here.
func (c *Component) Run(ctx context.Context) error {
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
	for {
		err := c.run(ctx, cfg, log)
		if !errors.Is(err, ErrLeaseLost) || !c.RestartOnLeaseLoss || ctx.Err() != nil {
			return err
		}
		// A scheduler whose queue has closed cannot run again: a new one
		// is built, with fresh caches, and stands by for the lease.
		log.Warn("lost the lease; starting again as a standby", "lease", leaseNamespace+"/"+leaseName)
	}
}

// run is one life of the scheduler: built, synced, elected, stopped.
func (c *Component) run(ctx context.Context, cfg *rest.Config, log *slog.Logger) error {
	// The informers run until this ends, not ctx: Run also returns when
	// the lease is lost, and stop waits for them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := c.newScheduler(ctx, cfg)
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
	return c.runElected(ctx, cfg, s, log)
}

// runElected runs the scheduler while this process holds the lease,
// as kube-scheduler's Run does with leader election on.
func (c *Component) runElected(ctx context.Context, cfg *rest.Config, s *scheduler, log *slog.Logger) error {
	id := c.Identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("scheduler: leader election identity: %w", err)
		}
		// kube-scheduler's uniquifier: two on one host never share a name.
		id = host + "_" + string(uuid.NewUUID())
	}
	lock, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, leaseNamespace, leaseName,
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: leaseEvents{s.broadcaster.NewRecorder(clientscheme.Scheme, corev1.DefaultSchedulerName)}},
		cfg, renewDeadline)
	if err != nil {
		return fmt.Errorf("scheduler: lease lock: %w", err)
	}
	// The elector runs OnStartedLeading in a goroutine it does not wait
	// for; Run does, so that it returns only once the scheduler has
	// stopped.
	var mu sync.Mutex
	var ended bool
	var scheduling chan struct{}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: leaseDuration,
		RenewDeadline: renewDeadline,
		RetryPeriod:   retryPeriod,
		// Hand the lease over at once on a clean stop, as kube-scheduler.
		ReleaseOnCancel: true,
		Name:            leaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				if ended {
					mu.Unlock()
					return
				}
				done := make(chan struct{})
				scheduling = done
				mu.Unlock()
				defer close(done)
				log.Info("scheduling", "leaderElect", true, "lease", leaseNamespace+"/"+leaseName, "identity", id)
				s.sched.Run(ctx)
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					log.Error("lost the lease, stopping", "lease", leaseNamespace+"/"+leaseName, "identity", id)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("scheduler: leader election: %w", err)
	}
	elector.Run(ctx)
	mu.Lock()
	ended = true
	done := scheduling
	mu.Unlock()
	if done != nil {
		<-done
	}
	if ctx.Err() != nil {
		return nil
	}
	return ErrLeaseLost
}

// leaseEvents records the lease's LeaderElection events ("became leader",
// "stopped leading") through events.k8s.io, whose events also name an
// action; kube-scheduler records them as core events.
type leaseEvents struct{ r events.EventRecorder }

func (l leaseEvents) Eventf(obj runtime.Object, eventType, reason, message string, args ...any) {
	l.r.Eventf(obj, nil, eventType, reason, "LeaderElection", message, args...)
}

// scheduler is upstream's scheduler with what feeds it.
type scheduler struct {
	sched       *kubescheduler.Scheduler
	informers   informers.SharedInformerFactory
	dynamic     dynamicinformer.DynamicSharedInformerFactory
	broadcaster events.EventBroadcaster
}

// newScheduler builds the scheduler as kube-scheduler's Setup does with no
// --config: the versioned KubeSchedulerConfiguration's defaults (New's
// default profile), an informer factory without resync, a dynamic one for
// the kinds plugins name by resource, and events through events.k8s.io.
// Events start flowing here; informers start in sync.
func (c *Component) newScheduler(ctx context.Context, cfg *rest.Config) (*scheduler, error) {
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
	return &scheduler{sched: sched, informers: factory, dynamic: dynFactory, broadcaster: broadcaster}, nil
}

// sync starts the informers and waits for their caches and the
// scheduler's event handlers, before leader election as kube-scheduler
// (DelayCacheUntilActive false): a standby takes over with warm caches.
// A kind the API server does not serve never syncs and upstream waits
// silently; the kinds still unsynced are logged every syncReport.
func (s *scheduler) sync(ctx context.Context, log *slog.Logger) error {
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
func (s *scheduler) waitForCaches(ctx context.Context) (kinds, missing []string, err error) {
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
func (s *scheduler) stop() {
	s.informers.Shutdown()
	s.dynamic.Shutdown()
	s.broadcaster.Shutdown()
}
