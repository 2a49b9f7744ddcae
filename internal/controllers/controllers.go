// Package controllers runs upstream kube-controller-manager controllers
// (k8s.io/kubernetes/pkg/controller/...) as a library, in dnsplane's
// process: `dnsplane controllers` on its own, and inside `dnsplane up` and
// `dnsplane apiserver` (docs/controllers.md). Each controller is a
// Descriptor in kube-controller-manager's style (name, constructor, why it
// runs or why it is disabled); the constructors call upstream's packages
// with kube-controller-manager's default configuration
// (NewDefaultComponentConfig), so a dnsplane cluster behaves as one whose
// kube-controller-manager runs with default flags, apart from what the
// descriptors disable.
//
// The API server leaves work to them as kube-apiserver does: a deleted
// namespace stays Terminating until the namespace controller has emptied
// it, an object deleted with the orphan or foregroundDeletion finalizer
// stays until the garbage collector has dealt with its dependents
// (docs/apiserver.md, "Deletion" and "Namespaces"), a pod stays Pending
// until the scheduler (internal/scheduler) binds it.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
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
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	kcmconfig "k8s.io/kubernetes/pkg/controller/apis/config"

	"github.com/dnsplane/dnsplane/internal/leaderelect"
	"github.com/dnsplane/dnsplane/internal/shutdownlog"
)

// Client rates: kube-controller-manager's default of 20 requests a second
// caps pod creation at ~20/s and a namespace's cleanup and a cascade's
// deletes with it (docs/controllers.md, "Client rates"); dnsplane's API
// server is one process on the same machine, built to take far more.
const (
	clientQPS   = 200
	clientBurst = 300
)

// resync is the informers' resync period, kube-controller-manager's
// --min-resync-period (it picks between it and twice it). Informers
// built without one refuse the namespace controller's own 5 minute resync.
const resync = 12 * time.Hour

// LeaseName is the Lease in kube-system the controllers hold while they
// run with leader election: kube-controller-manager's, so that dnsplane's
// controllers and a real kube-controller-manager never both act.
const LeaseName = "kube-controller-manager"

// Context is what a controller's constructor gets: clients of the API
// server, the shared informers (started once every controller is built)
// and kube-controller-manager's configuration.
type Context struct {
	// Config is the clients' configuration; NewClient copies it to set
	// each controller's user agent.
	Config *rest.Config
	Client kubernetes.Interface
	// Discovery is a discovery client of the controllers' own, uncached.
	Discovery discovery.DiscoveryInterface
	// RESTMapper maps kinds to resources through cached discovery, reset
	// every 30 s as kube-controller-manager resets it.
	RESTMapper *restmapper.DeferredDiscoveryRESTMapper
	Informers  informers.SharedInformerFactory
	// ObjectOrMetadataInformers gives typed informers for built-in kinds
	// and metadata-only ones for the rest (the garbage collector's and the
	// resource quota controller's).
	ObjectOrMetadataInformers informerfactory.InformerFactory
	// InformersStarted is closed once the informers are started.
	InformersStarted <-chan struct{}
	// ComponentConfig is kube-controller-manager's configuration with its
	// defaults and Options applied.
	ComponentConfig kcmconfig.KubeControllerManagerConfiguration
	// RootCA is the CA bundle that verifies the API server, which the root
	// CA publisher writes into every namespace's kube-root-ca.crt.
	RootCA []byte

	// clients builds each controller's client (NewClient).
	clients clientbuilder.ControllerClientBuilder
}

// NewClient is the controller's client, from kube-controller-manager's
// client builder: with Options.UseServiceAccountCredentials, as the
// service account kube-system/<name> (created when missing) with tokens
// it requests and renews; otherwise as the controllers' own user. Either
// way its requests carry the name in their user agent.
func (c *Context) NewClient(name string) (kubernetes.Interface, error) {
	cfg, err := c.NewConfig(name)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s client: %w", name, err)
	}
	return client, nil
}

// newClientset is a clientset of cfg; what names the client in errors.
func newClientset(cfg *rest.Config, what string) (kubernetes.Interface, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s client: %w", what, err)
	}
	return client, nil
}

// NewConfig is the controller's client configuration (NewClient).
func (c *Context) NewConfig(name string) (*rest.Config, error) {
	cfg, err := c.clients.Config(name)
	if err != nil {
		return nil, fmt.Errorf("%s client: %w", name, err)
	}
	return cfg, nil
}

// Options are the flags of `dnsplane controllers`, which `up` and
// `apiserver` set too.
type Options struct {
	// Controllers selects the controllers as kube-controller-manager's
	// --controllers does: "*" is every one not disabled by default,
	// "name" enables one, "-name" disables one. Empty is "*".
	Controllers []string
	// NodeMonitorGracePeriod is how long a Node may go without renewing
	// its Lease before it is Ready=Unknown; zero is kube's 50 s.
	NodeMonitorGracePeriod time.Duration
	// ClusterSigningCertFile and ClusterSigningKeyFile are the CA that
	// signs approved CertificateSigningRequests (kube-controller-manager's
	// --cluster-signing-cert-file/--cluster-signing-key-file); without
	// them no CSR is signed.
	ClusterSigningCertFile, ClusterSigningKeyFile string
	// UseServiceAccountCredentials runs each controller as its own
	// service account in kube-system, bound to its system:controller:<name>
	// role by upstream's bootstrap policy, as kube-controller-manager's
	// --use-service-account-credentials; the controllers' own user then
	// only needs system:kube-controller-manager's rights.
	UseServiceAccountCredentials bool
}

// Manager runs the selected controllers against the API server of a
// kubeconfig, as kube-controller-manager does: the `dnsplane controllers`
// command, and the controllers role of `up` and `apiserver`
// (internal/controlplane/controllersrole).
type Manager struct {
	Kubeconfig string
	// Config, when set, is used instead of Kubeconfig (the API server's
	// in-memory loopback credential).
	Config *rest.Config
	Logger *slog.Logger
	Options
	// LeaderElect runs the controllers only while this process holds the
	// kube-system/kube-controller-manager Lease (several replicas); Run
	// returns an error when the Lease is lost, as kube-controller-manager
	// exits.
	LeaderElect bool
	// LeaseDurations override kube's 15 s lease, 10 s renew deadline and
	// 2 s retry period when not zero (tests).
	LeaseDurations leaderelect.Durations
	// Descriptors overrides Descriptors() (tests); nil runs them all.
	Descriptors []Descriptor
}

// Name is the component's name in the control plane's logs.
func (*Manager) Name() string { return "controllers" }

// Run runs the controllers until ctx ends (with LeaderElect, once the
// Lease is held); it returns once all of them have stopped. Upstream's
// controllers log through klog's contextual logger, which is the
// manager's slog logger here.
func (m *Manager) Run(ctx context.Context) error {
	if err := m.runAll(ctx); err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	return nil
}

func (m *Manager) runAll(ctx context.Context) error {
	log := m.Logger
	if log == nil {
		log = slog.Default()
	}
	// What a stop cuts short is not an error (internal/shutdownlog).
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(shutdownlog.New(log.Handler(), ctx.Done())))
	var cfg *rest.Config
	if m.Config != nil {
		cfg = rest.CopyConfig(m.Config)
	} else {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", m.Kubeconfig); err != nil {
			return err
		}
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	rest.AddUserAgent(cfg, "dnsplane-controllers")
	descs := m.Descriptors
	if descs == nil {
		descs = Descriptors()
	}
	selected, err := Select(descs, m.Controllers)
	if err != nil {
		return err
	}
	if !m.LeaderElect {
		return m.run(ctx, cfg, selected, log)
	}
	// As kube-controller-manager with --leader-elect.
	return leaderelect.Run(ctx, leaderelect.Config{Namespace: metav1.NamespaceSystem, Name: LeaseName, Durations: m.LeaseDurations,
		RESTConfig: cfg, Logger: log}, func(ctx context.Context) error { return m.run(ctx, cfg, selected, log) })
}

// run builds every controller, starts the informers, and runs the
// controllers until ctx ends.
func (m *Manager) run(ctx context.Context, cfg *rest.Config, descs []Descriptor, log *slog.Logger) error {
	cc, stop, err := newContext(cfg, m.Options)
	if err != nil {
		return err
	}
	defer stop()
	var runs []func(context.Context)
	var names []string
	for _, d := range descs {
		run, err := d.New(ctx, cc.Context)
		if err != nil && ctx.Err() != nil {
			// Stopped while starting.
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		if run == nil {
			log.Info("controller not started: it has nothing to do with this configuration", "controller", d.Name)
			continue
		}
		runs = append(runs, run)
		names = append(names, d.Name)
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
		log.Debug("starting controller", "controller", names[i])
		wg.Go(func() { run(ctx) })
	}
	log.Info("controllers started", "count", len(runs))
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// startableContext is a Context with the channel run closes once the
// informers are started.
type startableContext struct {
	*Context
	started chan struct{}
}

// newContext builds the clients and informer factories, as
// kube-controller-manager's CreateControllerContext does; stop shuts the
// informers down.
func newContext(cfg *rest.Config, o Options) (startableContext, func(), error) {
	componentConfig, err := componentConfig(o)
	if err != nil {
		return startableContext{}, nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, err
	}
	mapperDiscovery, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return startableContext{}, nil, err
	}
	rootCA, err := rootCA(cfg)
	if err != nil {
		return startableContext{}, nil, err
	}
	// The garbage collector resets the mapper when discovery changes; it
	// must not share the client Sync reads (garbagecollector.Sync's note).
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(mapperDiscovery))
	typed := informers.NewSharedInformerFactory(client, resync)
	metadataInformers := metadatainformer.NewSharedInformerFactoryWithOptions(md, resync, metadatainformer.WithTransform(dropManagedFields))
	// kube-controller-manager's CreateControllerContext: the dynamic
	// builder's clients carry no credential of the root config.
	var clients clientbuilder.ControllerClientBuilder = clientbuilder.SimpleControllerClientBuilder{ClientConfig: cfg}
	if o.UseServiceAccountCredentials {
		clients = clientbuilder.NewDynamicClientBuilder(rest.AnonymousClientConfig(cfg), client.CoreV1(), metav1.NamespaceSystem)
	}
	started := make(chan struct{})
	cc := startableContext{
		Context: &Context{
			Config: cfg, Client: client, Discovery: dc, RESTMapper: mapper, Informers: typed,
			ObjectOrMetadataInformers: informerfactory.NewInformerFactory(typed, metadataInformers),
			InformersStarted:          started,
			ComponentConfig:           componentConfig,
			RootCA:                    rootCA,
			clients:                   clients,
		},
		started: started,
	}
	return cc, func() { typed.Shutdown(); metadataInformers.Shutdown() }, nil
}

// rootCA is the CA bundle of the client configuration, what
// kube-controller-manager publishes when --root-ca-file is not set.
func rootCA(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile == "" {
		return nil, nil
	}
	data, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's CA: %w", err)
	}
	return data, nil
}

// dropManagedFields keeps managedFields out of the metadata informers'
// caches, which never read them, as kube-controller-manager trims them.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
