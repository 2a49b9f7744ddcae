// Package agent is `dnsplane agent`, the DNS part of kubelet
// (docs/agent.md): it registers its Node and keeps its Lease, and for every
// pod bound to the node writes the pod's resolv.conf and hosts under
// --state-dir (internal/podfiles), gives it an IP from --pod-cidr, reports a
// Running status and kubelet's DNS events, and finishes the pod's deletion.
// There are no containers.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	"github.com/dnsplane/dnsplane/api/client/informers/externalversions"
	dplisters "github.com/dnsplane/dnsplane/api/client/listers/core/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/agent/podip"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// retryMax is the longest a failing pod waits for its next sync: kubelet's
// pod worker backOffPeriod (pkg/kubelet/kubelet.go).
const retryMax = 10 * time.Second

// Config is the agent's configuration: kubelet's flags that shape pod DNS,
// and the node's identity.
type Config struct {
	Client        *rest.Config // --kubeconfig
	NodeName      string       // --node-name, default os.Hostname()
	ClusterDNS    []string     // --cluster-dns: the nameservers of every cluster policy, autopath included
	ClusterDomain string       // --cluster-domain
	ResolvConf    string       // --resolv-conf; "" = no host file (kubelet's case)
	PodCIDR       string       // --pod-cidr
	StateDir      string       // --state-dir
	NodeIP        string       // --node-ip, default 127.0.0.1
	DaemonPort    int32        // status.daemonEndpoints.kubeletEndpoint.Port; 0 = none
	// HostsFile is the node's hosts file that host-network pods get, as
	// kubelet uses /etc/hosts. Default /etc/hosts.
	HostsFile string
	// NodeLabels are added to the Node's labels when the agent registers
	// it, as kubelet's --node-labels: `up` marks its nodes with
	// agent.UpNodeLabel so that a later `up` on the same data dir can
	// retire the ones it no longer runs.
	NodeLabels map[string]string
	Logger     *slog.Logger

	// LeaseDurationSeconds is the node lease's duration (kubelet's
	// --node-lease-duration-seconds, default 40).
	LeaseDurationSeconds int32
	// LeaseRenewInterval is how often the lease is renewed (kubelet: a
	// quarter of the duration, 10s).
	LeaseRenewInterval time.Duration
	// StatusInterval is how often the Node status is written (kubelet's
	// --node-status-update-frequency, default 10s).
	StatusInterval time.Duration
	// Resync is the pod informer's resync period (default 5m); a resync
	// rewrites nothing that is unchanged.
	Resync time.Duration
	// Sandbox, when set, gives every running pod a sandbox process
	// (internal/podsandbox) that its exec sessions run in, from its first
	// session until the pod goes; its StateDir is the agent's. nil = none,
	// and exec refuses sessions of unprivileged pods.
	Sandbox *podsandbox.Config
}

// Agent is a running node agent.
type Agent struct {
	cfg    Config
	log    *slog.Logger
	clock  clock.Clock
	node   resolvconf.Node
	ips    *podip.Allocator
	synced chan struct{}

	// Set by Run.
	runCtx context.Context
	kube   kubernetes.Interface
	dp     versioned.Interface
	lister dplisters.PodLister
	queue  workqueue.TypedRateLimitingInterface[string]
	events *events

	// tracked is what the agent set up per pod key (namespace/name): the
	// UID whose directory and IP exist, so a pod gone from the informer (or
	// replaced by one of the same name) is cleaned up. Only the worker
	// touches it.
	tracked map[string]trackedPod
	// admitted are the pods (key → UID) admitted against the node's pods
	// capacity, as kubelet's active pods: every non-terminal pod of the
	// node the agent has taken on. Only the worker (and restore, before
	// it) touches it.
	admitted map[string]types.UID
	// initial are the keys of the first convergence; Synced closes when
	// each was processed once.
	initialMu sync.Mutex
	initial   map[string]bool

	orphans            orphans
	housekeepingPeriod time.Duration

	// sandboxes is set by Run when Config.Sandbox is; only the worker
	// starts and stops sandboxes.
	sandboxes *podsandbox.Manager
}

type trackedPod struct {
	namespace, name string
	uid             types.UID
}

// New validates c (errors name the flag) and returns an agent; it does no
// I/O besides reading --resolv-conf.
func New(c Config) (*Agent, error) {
	if c.Client == nil {
		return nil, errors.New("--kubeconfig is required")
	}
	if c.NodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("--node-name: not set and the host name is unknown: %w", err)
		}
		c.NodeName = h
	}
	if c.StateDir == "" {
		return nil, errors.New("--state-dir is required")
	}
	if c.NodeIP == "" {
		c.NodeIP = "127.0.0.1"
	}
	nodeIP := net.ParseIP(c.NodeIP)
	if nodeIP == nil {
		return nil, fmt.Errorf("--node-ip: %q is not an IP address", c.NodeIP)
	}
	c.NodeIP = nodeIP.String()
	for _, s := range c.ClusterDNS {
		if net.ParseIP(s) == nil {
			return nil, fmt.Errorf("--cluster-dns: %q is not an IP address", s)
		}
	}
	if c.PodCIDR == "" {
		return nil, errors.New("--pod-cidr is required")
	}
	ips, err := podip.New(c.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("--pod-cidr: %w", err)
	}
	if c.DaemonPort < 0 || c.DaemonPort > 65535 {
		return nil, fmt.Errorf("daemon port %d: not a port", c.DaemonPort)
	}
	node := resolvconf.Node{
		ClusterDomain:  c.ClusterDomain,
		ClusterDNS:     c.ClusterDNS,
		HostResolvConf: c.ResolvConf != "",
		NodeIPs:        []net.IP{nodeIP},
	}
	if c.ResolvConf != "" {
		host, err := resolvconf.ParseFile(c.ResolvConf)
		if err != nil {
			return nil, fmt.Errorf("--resolv-conf: %w", err)
		}
		node.Host = host
	}
	if c.HostsFile == "" {
		c.HostsFile = "/etc/hosts"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.LeaseDurationSeconds <= 0 {
		c.LeaseDurationSeconds = 40
	}
	if c.LeaseRenewInterval <= 0 {
		c.LeaseRenewInterval = time.Duration(c.LeaseDurationSeconds) * time.Second / 4
	}
	if c.StatusInterval <= 0 {
		c.StatusInterval = 10 * time.Second
	}
	if c.Resync <= 0 {
		c.Resync = 5 * time.Minute
	}
	return &Agent{
		cfg: c, log: c.Logger.With("node", c.NodeName), clock: clock.RealClock{},
		node: node, ips: ips, synced: make(chan struct{}),
		tracked: map[string]trackedPod{}, admitted: map[string]types.UID{}, orphans: orphans{failed: map[string]string{}},
		housekeepingPeriod: housekeepingPeriod,
	}, nil
}

// Synced is closed once the agent has registered its Node, removed the
// directories of pods that no longer exist and processed every pod of the
// node once.
func (a *Agent) Synced() <-chan struct{} { return a.synced }

// Run registers the node, keeps its lease and status, and serves the
// node's pods until ctx is done. It returns an error only when set-up fails
// (clients, the state dir, the first Node registration, the informer's
// first sync).
func (a *Agent) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.runCtx = ctx
	restCfg := rest.CopyConfig(a.cfg.Client)
	if restCfg.QPS == 0 && restCfg.Burst == 0 && restCfg.RateLimiter == nil {
		// kubelet's --kube-api-qps and --kube-api-burst defaults: client-go's
		// own (5, 10) made a status write per pod the bottleneck, about six
		// pods a second (bench/agent.sh).
		restCfg.QPS, restCfg.Burst = 50, 100
	}
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	dp, err := versioned.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	a.kube, a.dp = kube, dp
	if err := os.MkdirAll(podfiles.PodsDir(a.cfg.StateDir), 0o755); err != nil {
		return fmt.Errorf("--state-dir: %w", err)
	}
	if a.cfg.Sandbox != nil {
		sc := *a.cfg.Sandbox
		sc.StateDir = a.cfg.StateDir
		if sc.Logger == nil {
			sc.Logger = a.log
		}
		m, err := podsandbox.NewManager(sc)
		if err != nil {
			return fmt.Errorf("pod sandboxes: %w", err)
		}
		a.sandboxes = m
		// A stopped agent leaves no sandbox behind: they are its
		// children, as pause containers are the runtime's (docs/exec.md).
		defer m.Close()
	}
	if _, err := a.registerNode(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	if err := a.ensureLeaseNamespace(ctx); err != nil {
		return err
	}
	lc := a.newLeaseController(kube)
	wg.Go(func() { lc.Run(ctx) })
	wg.Go(func() { a.runNodeStatus(ctx) })

	a.events = newEvents(ctx, kube, a.cfg.NodeName)
	defer a.events.shutdown()
	if a.cfg.ResolvConf != "" {
		a.checkHostLimits(ctx)
	}

	factory := externalversions.NewSharedInformerFactoryWithOptions(dp, a.cfg.Resync,
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", a.cfg.NodeName).String()
		}))
	informer := factory.Core().V1().Pods()
	a.lister = informer.Lister()
	a.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		// client-go's controller backoff, but a failing pod is retried at
		// least every 10s (kubelet's pod worker backOffPeriod), not after
		// up to 1000s: a full disk or exhausted pod CIDR that clears is
		// noticed promptly. The API client's QPS bounds the total.
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, retryMax),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "dnsplane-agent-pods"})
	defer a.queue.ShutDown()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.queue.Add(key)
		}
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer func() {
		// Shutdown waits for the informers, which stop only when ctx is
		// done: cancel first, or any early return below deadlocks here,
		// silently, with the Node still Ready (issue 18).
		cancel()
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("pod informer did not sync")
	}
	if err := a.restore(ctx); err != nil {
		return err
	}
	wg.Go(func() {
		for a.processNext(ctx) {
		}
	})
	wg.Go(func() { a.housekeeping(ctx) })
	if a.sandboxes != nil {
		wg.Go(func() {
			if err := podsandbox.ServeEnsure(ctx, a.cfg.StateDir, a, a.log); err != nil {
				a.log.Error("pod sandboxes: exec sessions cannot start them", "err", err)
			}
		})
	}
	<-ctx.Done()
	a.queue.ShutDown()
	return nil
}

// checkHostLimits is kubelet's CheckLimitsForResolvConf: a Warning Event
// on the Node (reason CheckLimitsForResolvConf, as kubelet's) when the host
// resolv.conf would make every ClusterFirst pod hit the limits. Once per
// start; the broadcaster aggregates repeats across restarts.
func (a *Agent) checkHostLimits(_ context.Context) {
	ref := a.nodeRef()
	for _, w := range resolvconf.CheckHostLimits(a.cfg.ResolvConf, a.node.Host, a.cfg.ClusterDomain) {
		a.log.Warn(w.Message, "reason", w.Reason)
		a.events.recorder.Event(ref, corev1.EventTypeWarning, w.Reason, w.Message)
	}
}

// ensureLeaseNamespace creates kube-node-lease when it is missing. The API
// server creates it on start, as kube-apiserver does; this covers API
// servers that predate that (docs/agent.md).
func (a *Agent) ensureLeaseNamespace(ctx context.Context) error {
	_, err := a.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}, metav1.CreateOptions{})
	// A node may not create namespaces (upstream's system:node rules): a
	// 403 leaves it to the lease controller, which says so when the
	// namespace is really missing.
	if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("creating namespace %s for the node lease: %w", leaseNamespace, err)
	}
	return nil
}

// restore is the start-up convergence, after the informer synced: IPs
// already in the node's pods' status are reserved before any new one is
// handed out, directories of pods that no longer exist are removed, events
// already emitted are remembered, and every pod is queued.
func (a *Agent) restore(ctx context.Context) error {
	pods, err := a.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	live := map[types.UID]bool{}
	a.initial = map[string]bool{}
	a.readmit(pods)
	for _, p := range pods {
		live[p.UID] = true
		key := p.Namespace + "/" + p.Name
		a.initial[key] = true
		if p.Spec.HostNetwork || p.Status.PodIP == "" || terminal(p) {
			continue // a terminal pod's sandbox, and so its IP, is gone
		}
		ip, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil {
			continue
		}
		if err := a.ips.Reserve(p.UID, ip); err != nil {
			// Outside a changed --pod-cidr, or a clash: the pod gets a new IP.
			a.log.Warn("pod IP not kept", "pod", key, "ip", ip, "err", err)
		}
	}
	// Not fatal: a directory that cannot be removed is retried by
	// housekeeping, and the node's pods are served meanwhile.
	a.removeOrphans(live)
	switch err := a.events.load(ctx, a.kube, live); {
	case apierrors.IsForbidden(err):
		// An agent that is its node (system:node:<name>) may not list
		// Events (upstream's node rules), so a restart may repeat a
		// warning, as kubelet's restarts do (docs/agent.md).
		a.log.Debug("not reading the pods' past events", "err", err)
	case err != nil:
		// Without the list a restart may repeat a warning; not fatal.
		a.log.Warn("reading the pods' events", "err", err)
	}
	if len(a.initial) == 0 {
		close(a.synced)
	}
	for key := range a.initial {
		a.queue.Add(key)
	}
	return nil
}

// readmit admits the node's pods again after a restart, as kubelet does
// on start: those already started first (they were admitted before), then
// the rest in creation order, up to the pods capacity; a pod left over is
// rejected when its turn comes.
func (a *Agent) readmit(pods []*dpcorev1.Pod) {
	var active []*dpcorev1.Pod
	for _, p := range pods {
		if !terminal(p) && p.DeletionTimestamp == nil && p.Spec.NodeName == a.cfg.NodeName {
			active = append(active, p)
		}
	}
	slices.SortStableFunc(active, func(x, y *dpcorev1.Pod) int {
		if xs, ys := x.Status.StartTime != nil, y.Status.StartTime != nil; xs != ys {
			if xs {
				return -1
			}
			return 1
		}
		if c := x.CreationTimestamp.Compare(y.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	})
	for _, p := range active {
		if p.Status.StartTime != nil || len(a.admitted) < a.ips.Capacity() {
			a.admitted[p.Namespace+"/"+p.Name] = p.UID
		}
	}
}

// terminal reports whether the pod's phase is final.
func terminal(p *dpcorev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func (a *Agent) doneInitial(key string) {
	a.initialMu.Lock()
	defer a.initialMu.Unlock()
	if a.initial == nil || !a.initial[key] {
		return
	}
	delete(a.initial, key)
	if len(a.initial) == 0 {
		a.initial = nil
		close(a.synced)
	}
}

func (a *Agent) processNext(ctx context.Context) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	err := a.syncPod(ctx, key)
	a.doneInitial(key)
	if err == nil {
		a.queue.Forget(key)
		return true
	}
	if ctx.Err() != nil {
		return true
	}
	a.log.Warn("pod sync failed, retrying", "pod", key, "err", err)
	a.queue.AddRateLimited(key)
	return true
}
