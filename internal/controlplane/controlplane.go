package controlplane

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/agentdial"
	"github.com/dnsplane/dnsplane/internal/apiserver"
	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/datadirlock"
	"github.com/dnsplane/dnsplane/internal/ipalloc"
	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/portalloc"
	"github.com/dnsplane/dnsplane/internal/portowner"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// Component is what runs beside the API server: the controllers, the
// scheduler, the DNS operator, the cluster DNS, the node cache, a node
// agent, each from a Role. Run serves until ctx ends and then returns nil
// once stopped; an error ends the control plane.
type Component interface {
	Name() string
	Run(ctx context.Context) error
}

// Starter is a Component whose start must finish before the next one
// starts (a DNS server binding its listeners before the node cache that
// forwards to it). An error from Start ends start-up.
type Starter interface {
	Start(ctx context.Context) error
}

// Cluster is what a component needs to reach the API server.
type Cluster struct {
	URL        string // https:// address of the API server
	Kubeconfig string // the admin kubeconfig
	// Loopback is the API server's client configuration of itself
	// (system:apiserver, a token that lives only in this process), for what
	// kube-apiserver would run inside itself: `apiserver`'s deletion
	// controllers (controllersrole). Roles that stand for a component of
	// their own write it a kubeconfig of its own instead.
	Loopback *rest.Config
	DataDir  string // --data-dir: components keep their files under it
	Logger   *slog.Logger
	// PKI is the cluster CA, for roles that serve what the API server
	// dials (the node agent's exec server).
	PKI *pki.Bundle
	// Components reports the control plane's components and whether each
	// runs, for `dnsplane status` through the control socket.
	Components func() []ComponentStatus
}

// Role is a set of components with configuration of its own, each in a
// package of its own under internal/controlplane: controllersrole,
// schedulerrole, operatorrole, dnsroles, agentrole, and `up`'s control
// socket (up). docs/architecture.md, "Assembly and the dependency rule".
type Role interface {
	// Validate checks the role's configuration before anything starts;
	// errors are *ConfigError naming the flag.
	Validate() error
	// Components builds the role's components once the API server is up,
	// in their start order.
	Components(Cluster) ([]Component, error)
}

// DNSAddresser is a Role that serves DNS: the addresses it serves on (once
// settled), which the DNS resource's forwarders may not name (a
// forwarding loop; internal/operator/dnsspec.ValidateNotOwn). It is asked
// on every DNS write, from the API server's goroutines.
type DNSAddresser interface {
	DNSAddresses() []netip.AddrPort
}

// NodeRunner is a Role that runs a node's agent in this process: a Node
// that an earlier `up` registered (agent.UpNodeLabel) and no role runs now
// is retired at start (retireNodes).
type NodeRunner interface {
	RunsNode(node string) bool
}

// AgentEndpointer is a Role that runs node agents in this process: the
// exec server endpoint of node's agent, once bound, which pods/exec may
// dial whatever the agent rules say (internal/agentdial.Endpoints).
type AgentEndpointer interface {
	AgentEndpoint(node string) (netip.AddrPort, bool)
}

// agentDial is what pods/exec may dial: the endpoints of the roles'
// agents, or what rules allow outside the service CIDR.
func agentDial(roles []Role, rules agentdial.Rules, services netip.Prefix) agentdial.Policy {
	rules.Denied = append(slices.Clone(rules.Denied), services)
	own := agentdial.Endpoints(func(node string) (netip.AddrPort, bool) {
		for _, r := range roles {
			if a, ok := r.(AgentEndpointer); ok {
				if ap, ok := a.AgentEndpoint(node); ok {
					return ap, true
				}
			}
		}
		return netip.AddrPort{}, false
	})
	// Rules first: their refusal says more than "not one of ours".
	return agentdial.Any{rules, own}
}

// dnsAddresses are the addresses the roles that serve DNS serve on.
func dnsAddresses(roles []Role) []netip.AddrPort {
	var out []netip.AddrPort
	for _, r := range roles {
		if a, ok := r.(DNSAddresser); ok {
			out = append(out, a.DNSAddresses()...)
		}
	}
	return out
}

// ControlPlane is a started control plane.
type ControlPlane struct {
	// URL is the https:// address the API server listens on.
	URL string
	// Kubeconfig is the admin kubeconfig written into the data dir.
	Kubeconfig string
	// Server is the API server (for in-process callers and tests).
	Server *apiserver.Server

	log      *slog.Logger
	pki      *pki.Bundle
	loopback *rest.Config
	dataDir  string
	roles    []Role
	closers  []func() error

	group    *errgroup.Group
	groupCtx context.Context
	// mu guards components: the control socket reads their states while
	// Start still launches them.
	mu         sync.Mutex
	components []*runningComponent
	stopOnce   sync.Once
	stopErr    error

	// lock holds the data dir (datadirlock) until Stop; served says
	// start-up finished, so Stop removes the lock file (a refused start
	// removes it only when it created it, leaving the dir as it was).
	lock   *datadirlock.Lock
	served bool
}

type runningComponent struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error // why Run returned; read after done is closed
}

// ComponentStatus is one component of a running control plane. A
// component's Run only returns when it stops or fails, and a failure
// stops the control plane, so Running is false only while `up` stops or
// when a component failed (Err).
type ComponentStatus struct {
	Name    string
	Running bool
	Err     error
}

// ComponentStatuses are the launched components, in their start order.
func (cp *ControlPlane) ComponentStatuses() []ComponentStatus {
	cp.mu.Lock()
	comps := slices.Clone(cp.components)
	cp.mu.Unlock()
	out := make([]ComponentStatus, 0, len(comps))
	for _, rc := range comps {
		st := ComponentStatus{Name: rc.name, Running: true}
		select {
		case <-rc.done:
			st.Running, st.Err = false, rc.err
		default:
		}
		out = append(out, st)
	}
	return out
}

// Run starts the control plane, calls ready (when not nil) once everything
// serves, and runs until ctx ends or a component fails; then it stops the
// components in the reverse order of their start, the API server last,
// and closes storage.
func Run(ctx context.Context, c Config, ready func(*ControlPlane)) error {
	cp, err := Start(ctx, c)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(cp)
	}
	return cp.Wait(ctx)
}

// Start checks the config, then brings up etcd, the PKI and admin
// credentials, authentication, the API server and its bootstrap objects,
// and then the components in order, and returns once all of them serve.
// Cancelling ctx stops start-up at any point.
func Start(ctx context.Context, c Config) (*ControlPlane, error) {
	// A lock handed over is released on every failure, as one taken here.
	refuse := func(err error) (*ControlPlane, error) {
		if c.DataDirLock != nil {
			_ = c.DataDirLock.Release(false)
		}
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return refuse(err)
	}
	c = c.withDefaults()
	// Upstream's pod validation reads --allow-privileged from a
	// process-wide setting, which kube-apiserver also sets once at start;
	// set before anything here validates a pod, so one process holds one
	// value.
	if err := upstream.AllowPrivileged(c.AllowPrivileged); err != nil {
		return refuse(&ConfigError{Err: err})
	}
	log := c.Logger
	// The data dir is claimed (locked) before any port is bound, so that a
	// second `up` or `apiserver` on it says who holds it rather than that
	// its port is in use. `up` claims it itself, before it probes the DNS
	// addresses, and hands the lock over in DataDirLock.
	lock := c.DataDirLock
	if lock == nil {
		var err error
		if lock, err = ClaimDataDir(c.DataDir, log); err != nil {
			return nil, err
		}
	}
	// Bound before anything is written: in use, it fails with nothing
	// changed (kube-apiserver binds it while building its config too).
	ln, err := listen(c.BindAddress, c.SecurePort)
	if err != nil {
		_ = lock.Release(false)
		return nil, err
	}
	groupCtx := context.WithoutCancel(ctx)
	cp := &ControlPlane{log: log, roles: c.Roles, dataDir: c.DataDir, lock: lock}
	cp.group, cp.groupCtx = errgroup.WithContext(groupCtx)
	fail := func(err error) (*ControlPlane, error) {
		ln.Close()
		_ = cp.Stop()
		return nil, err
	}

	done := step(c.Progress, StepEtcd)
	client, err := cp.connectEtcd(ctx, c)
	if err != nil {
		return fail(err)
	}
	done()
	store := storage.New(client, c.EtcdPrefix)
	compactCtx, stopCompactor := context.WithCancel(groupCtx)
	go storage.RunCompactor(compactCtx, client, c.CompactionInterval, log)
	cp.closers = append([]func() error{func() error { stopCompactor(); return nil }}, cp.closers...)

	ips, err := ipalloc.New(store, c.ServiceClusterIPRange)
	if err != nil {
		return fail(fmt.Errorf("--service-cluster-ip-range: %w", err))
	}
	nodePorts, err := portalloc.New(store, c.ServiceNodePortRange)
	if err != nil {
		return fail(fmt.Errorf("--service-node-port-range: %w", err))
	}
	port := ln.Addr().(*net.TCPAddr).Port
	done = step(c.Progress, StepCertificates)
	bundle, err := pki.Ensure(filepath.Join(c.DataDir, "pki"), serverHosts(c.BindAddress))
	if err != nil {
		return fail(fmt.Errorf("certificates: %w", err))
	}
	cp.pki = bundle
	cp.URL = "https://" + net.JoinHostPort(advertisedHost(c.BindAddress), strconv.Itoa(port))
	kubeconfig, tokenFile, err := pki.EnsureAdmin(c.DataDir, cp.URL, bundle)
	if err != nil {
		return fail(fmt.Errorf("admin credentials: %w", err))
	}
	cp.Kubeconfig = kubeconfig
	self, err := newLoopback()
	if err != nil {
		return fail(err)
	}
	loopbackConfig := self.config(cp.URL, bundle.CACertPEM)
	cp.loopback = loopbackConfig
	authenticator, err := authenticators(bundle.CA, tokenFile, c.TokenAuthFile, log)
	if err != nil {
		return fail(err)
	}
	authenticator = authn.Union(self, authenticator)
	agents, err := kubeletTLS(filepath.Join(c.DataDir, "pki"), bundle)
	if err != nil {
		return fail(fmt.Errorf("certificates: %w", err))
	}
	saKey, err := pki.EnsureServiceAccountKey(filepath.Join(c.DataDir, "pki"))
	if err != nil {
		return fail(fmt.Errorf("service account signing key: %w", err))
	}
	done()
	done = step(c.Progress, StepAPIServer)
	authorization, err := newAuthorization(c.AuthorizationModes, loopbackConfig)
	if err != nil {
		return fail(err)
	}
	maxObject := 0
	if len(c.EtcdServers) == 0 {
		maxObject = apiserver.EmbeddedEtcdMaxObjectBytes
	}
	roles := c.Roles
	services, err := netip.ParsePrefix(c.ServiceClusterIPRange)
	if err != nil {
		return fail(fmt.Errorf("--service-cluster-ip-range: %w", err))
	}
	srv, err := apiserver.New(apiserver.Config{Store: store, ServiceIPs: ips, ServiceNodePorts: nodePorts, ClusterDomain: c.ClusterDomain, Gates: c.Gates, Authenticator: authenticator,
		OwnDNSAddresses: func() []netip.AddrPort { return dnsAddresses(roles) },
		Logger:          log, SecurePort: port, BookmarkInterval: c.BookmarkInterval, Limits: c.Limits, MaxObjectBytes: maxObject, KubeletTLS: agents,
		AgentDial:         agentDial(roles, c.AgentRules, services),
		ServiceAccountKey: saKey, ServiceAccountIssuer: serviceAccountIssuer(c.ClusterDomain),
		Authorizer: authorization.authorizer, RuleResolver: authorization.authorizer.RuleResolver,
		RBACRules: authorization.authorizer.EscalationRules,
		Informers: authorization.factory, Loopback: authorization.client})
	if err != nil {
		return fail(err)
	}
	cp.Server = srv
	authorization.pods.Attach(srv)
	if err := bootstrap(ctx, srv, ips.Range(), port); err != nil {
		return fail(fmt.Errorf("bootstrapping: %w", err))
	}
	tlsConfig, err := bundle.ServerTLSConfig()
	if err != nil {
		return fail(err)
	}
	serving, err := srv.ServeTLS(ln, tlsConfig)
	if err != nil {
		return fail(err)
	}
	log.Info("API server listening", "url", cp.URL, "kubeconfig", kubeconfig)
	cp.launch(&apiServerComponent{serving: serving, timeout: c.ShutdownTimeout})
	cp.launch(authorization)
	if err := authorization.ready(ctx, log); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	done()
	cp.launch(&apiServerControllers{loopback: loopbackConfig, clientCA: bundle.CACertPEM, namespaces: SystemNamespaces()})
	if advertise, err := advertiseAddress(c.AdvertiseAddress, c.BindAddress); err != nil {
		return nil, errors.Join(err, cp.Stop())
	} else if advertise == nil {
		log.Warn("no address to advertise: the kubernetes Service gets no endpoints; set --advertise-address")
	} else {
		cp.launch(&kubernetesEndpoints{loopback: loopbackConfig, etcd: client, etcdPrefix: c.EtcdPrefix,
			advertise: advertise, serviceIP: firstAddress(ips.Range()), port: port, log: log})
	}

	if err := retireNodes(ctx, loopbackConfig, c.Roles, log); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	var comps []Component
	for _, r := range c.Roles {
		rc, err := r.Components(cp.cluster())
		if err != nil {
			return nil, errors.Join(err, cp.Stop())
		}
		comps = append(comps, rc...)
	}
	for _, comp := range comps {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(fmt.Errorf("starting %s: %w", comp.Name(), context.Cause(ctx)), cp.Stop())
		}
		done := step(c.Progress, comp.Name())
		if s, ok := comp.(Starter); ok {
			if err := s.Start(ctx); err != nil {
				return nil, errors.Join(err, cp.Stop())
			}
		}
		cp.launch(comp)
		done()
	}
	cp.served = true
	return cp, nil
}

// cluster is what components need to reach the API server.
func (cp *ControlPlane) cluster() Cluster {
	return Cluster{URL: cp.URL, Kubeconfig: cp.Kubeconfig, Loopback: cp.loopback, Logger: cp.log, DataDir: cp.dataDir, PKI: cp.pki,
		Components: cp.ComponentStatuses}
}

// launch runs comp in the group with a context of its own, so that Stop
// can end the components one at a time.
func (cp *ControlPlane) launch(comp Component) {
	ctx, cancel := context.WithCancel(cp.groupCtx)
	rc := &runningComponent{name: comp.Name(), cancel: cancel, done: make(chan struct{})}
	cp.mu.Lock()
	cp.components = append(cp.components, rc)
	cp.mu.Unlock()
	cp.group.Go(func() error {
		defer close(rc.done)
		if err := comp.Run(ctx); err != nil {
			rc.err = fmt.Errorf("%s: %w", comp.Name(), err)
			return rc.err
		}
		return nil
	})
}

// Wait runs until ctx ends or a component fails, then stops everything in
// order. It returns the first component's failure, or what stopping did.
func (cp *ControlPlane) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case <-cp.groupCtx.Done():
	}
	cp.log.Info("shutting down")
	return cp.Stop()
}

// Stop ends the components in the reverse order of their start (the API
// server, started first, gets its graceful shutdown last), then closes the
// etcd client and the embedded etcd. It is safe to call more than once.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		cp.mu.Lock()
		comps := slices.Clone(cp.components)
		cp.mu.Unlock()
		for i := len(comps) - 1; i >= 0; i-- {
			rc := comps[i]
			t0 := time.Now()
			rc.cancel()
			<-rc.done
			cp.log.Debug("stopped", "component", rc.name, "took", time.Since(t0))
		}
		var errs []error
		if cp.group != nil {
			errs = append(errs, cp.group.Wait())
		}
		t0 := time.Now()
		for _, c := range cp.closers {
			errs = append(errs, c())
		}
		cp.log.Debug("stopped", "component", "storage", "took", time.Since(t0))
		cp.closers = nil
		// Last: etcd has let go of the dir.
		if cp.lock != nil {
			errs = append(errs, cp.lock.Release(cp.served))
		}
		cp.stopErr = errors.Join(errs...)
	})
	return cp.stopErr
}

// listen binds the API server's port; a port in use names the flags that
// move it.
func listen(bind string, port int) (net.Listener, error) {
	addr := net.JoinHostPort(bind, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		who := portowner.Parenthesized(addr, "tcp")
		return nil, fmt.Errorf("--secure-port %d: %s is already in use by another process%s; choose another port with --secure-port (0 picks a free one): %w", port, addr, who, err)
	case err != nil:
		return nil, fmt.Errorf("listening on %s (--bind-address, --secure-port): %w", addr, err)
	}
	return ln, nil
}

func authenticators(ca *x509.Certificate, adminTokens, extraTokens string, log *slog.Logger) (authn.Authenticator, error) {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	list := []authn.Authenticator{authn.X509{Roots: roots}}
	for _, path := range []string{adminTokens, extraTokens} {
		if path == "" {
			continue
		}
		tf, err := authn.LoadTokenFile(path)
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		for _, w := range tf.Warnings() {
			log.Warn("token file", "path", path, "warning", w)
		}
		list = append(list, tf)
	}
	return authn.Union(list...), nil
}

// serverHosts are the names the serving certificate covers.
func serverHosts(bind string) []string {
	hosts := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	if bind != "" && bind != "0.0.0.0" && bind != "::" {
		hosts = append(hosts, bind)
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// advertisedHost is the host the kubeconfig points at: a wildcard bind is
// reached on loopback.
func advertisedHost(bind string) string {
	if bind == "" || bind == "0.0.0.0" || bind == "::" {
		return "127.0.0.1"
	}
	return bind
}

// serviceAccountIssuer is the iss claim of service account tokens: the
// in-cluster URL of the API server, kubeadm's default for
// --service-account-issuer.
func serviceAccountIssuer(clusterDomain string) string {
	if clusterDomain == "" {
		clusterDomain = "cluster.local"
	}
	return "https://kubernetes.default.svc." + clusterDomain
}

// ClaimDataDir readies dataDir for one process and locks it: it creates
// it, refuses one that is someone else's (a dir of another user, or one
// holding files dnsplane did not write), makes it owner-only (0700: it
// holds the CA key, etcd's client key and tokens.csv), and takes its lock
// (internal/datadirlock), so that a second process on it fails naming the
// holder's pid. Errors the user can fix are *ConfigError.
func ClaimDataDir(dataDir string, log *slog.Logger) (*datadirlock.Lock, error) {
	if fi, err := os.Stat(dataDir); err == nil && !fi.IsDir() {
		return nil, ConfigErrorf("--data-dir %s is not a directory: choose another --data-dir", dataDir)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir (--data-dir): %w", err)
	}
	// Someone else's dir is refused before the lock file is written.
	if err := checkOwnDir(dataDir); err != nil {
		return nil, err
	}
	if err := datadirlock.CheckOwner(dataDir); err != nil {
		if notOwned, ok := errors.AsType[*datadirlock.NotOwnedError](err); ok {
			return nil, &ConfigError{Err: notOwned}
		}
		return nil, err
	}
	// One process per data dir, taken before anything in it is written: a
	// second `up` fails here naming the first one's pid.
	lock, err := datadirlock.Acquire(dataDir)
	if err != nil {
		if held, ok := errors.AsType[*datadirlock.HeldError](err); ok {
			return nil, &ConfigError{Err: held}
		}
		return nil, err
	}
	// Files in the data dir that dnsplane did not write are refused before
	// etcd creates anything there.
	if err := pki.CheckAdmin(dataDir); err != nil {
		_ = lock.Release(false)
		if foreign, ok := errors.AsType[*pki.ForeignFileError](err); ok {
			return nil, &ConfigError{Err: fmt.Errorf("%w: move it away or choose another --data-dir", foreign)}
		}
		return nil, fmt.Errorf("data dir: %w", err)
	}
	// Last, so that a refused start leaves the dir as it was.
	was, err := datadirlock.MakePrivate(dataDir)
	if err != nil {
		_ = lock.Release(false)
		if notOwned, ok := errors.AsType[*datadirlock.NotOwnedError](err); ok {
			return nil, &ConfigError{Err: notOwned}
		}
		return nil, err
	}
	if was != 0 && log != nil {
		log.Info("data dir made owner-only", "dataDir", dataDir, "was", fmt.Sprintf("%#o", was), "now", "0700")
	}
	return lock, nil
}
