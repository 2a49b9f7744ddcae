package apiserver

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/component-base/featuregate"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/etcdproc"
	"github.com/dnsplane/dnsplane/internal/ipalloc"
	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// Options are the flags of `dnsplane apiserver`.
type Options struct {
	DataDir     string // CA, certificates, tokens, kubeconfig and (embedded) etcd data
	BindAddress string // default 127.0.0.1
	SecurePort  int    // default 6443; 0 picks a free port
	// EtcdServers selects an external etcd cluster; empty runs an embedded
	// single-member etcd under DataDir/etcd.
	EtcdServers                           []string
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	EtcdPrefix                            string // default /registry
	ServiceClusterIPRange                 string // default 10.96.0.0/12
	// TokenAuthFile adds tokens to the generated admin token (kube's CSV
	// format); empty uses only DataDir/tokens.csv.
	TokenAuthFile string
	Gates         featuregate.FeatureGate
	Logger        *slog.Logger
	// CompactionInterval is how often old etcd revisions are compacted
	// (default 5m, as kube-apiserver).
	CompactionInterval time.Duration
	// BookmarkInterval overrides how often idle watches get a bookmark.
	BookmarkInterval time.Duration
	// EtcdMemberCommand, when set, runs the embedded etcd in a supervised
	// child process started with this command line (internal/etcdproc),
	// so that etcd failing never takes this process down; empty runs it
	// inside this process.
	EtcdMemberCommand []string
	// EtcdReadyTimeout bounds the child etcd's start (default 60s).
	EtcdReadyTimeout time.Duration
	// Limits bound connections, requests in flight and request time
	// (limits.go); nil = DefaultLimits(), kube-apiserver's.
	Limits *Limits
}

// Running is a started API server.
type Running struct {
	// URL is the https:// address the server listens on.
	URL string
	// Kubeconfig is the admin kubeconfig written into the data dir.
	Kubeconfig string
	// Server is the HTTP API (for in-process callers and tests).
	Server *Server

	httpServer *http.Server
	closers    []func() error
	done       chan struct{}
	serveErr   error
	stopOnce   sync.Once
}

// Start brings up storage, certificates, authentication and the HTTPS
// listener, and returns once the server accepts requests.
func Start(ctx context.Context, o Options) (*Running, error) {
	o = withDefaults(o)
	log := o.Logger
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	run := &Running{done: make(chan struct{})}
	fail := func(err error) (*Running, error) {
		run.closeAll()
		return nil, err
	}

	client, err := connectEtcd(ctx, o, run)
	if err != nil {
		return fail(err)
	}
	store := storage.New(client, o.EtcdPrefix)
	compactCtx, stopCompactor := context.WithCancel(context.WithoutCancel(ctx))
	go storage.RunCompactor(compactCtx, client, o.CompactionInterval, log)
	run.closers = append(run.closers, func() error { stopCompactor(); return nil })

	ips, err := ipalloc.New(store, o.ServiceClusterIPRange)
	if err != nil {
		return fail(fmt.Errorf("--service-cluster-ip-range: %w", err))
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return fail(fmt.Errorf("listening: %w", err))
	}
	port := ln.Addr().(*net.TCPAddr).Port
	bundle, err := pki.Ensure(filepath.Join(o.DataDir, "pki"), serverHosts(o.BindAddress))
	if err != nil {
		ln.Close()
		return fail(fmt.Errorf("certificates: %w", err))
	}
	run.URL = "https://" + net.JoinHostPort(advertisedHost(o.BindAddress), strconv.Itoa(port))
	kubeconfig, tokenFile, err := pki.EnsureAdmin(o.DataDir, run.URL, bundle)
	if err != nil {
		ln.Close()
		return fail(fmt.Errorf("admin credentials: %w", err))
	}
	run.Kubeconfig = kubeconfig
	authenticator, err := authenticators(bundle.CA, tokenFile, o.TokenAuthFile, log)
	if err != nil {
		ln.Close()
		return fail(err)
	}

	limits := limitsOrDefault(o.Limits)
	maxObject := 0
	if len(o.EtcdServers) == 0 {
		maxObject = embeddedEtcdMaxObjectBytes
	}
	srv, err := New(Config{Store: store, ServiceIPs: ips, Gates: o.Gates, Authenticator: authenticator,
		Logger: log, SecurePort: port, BookmarkInterval: o.BookmarkInterval, Limits: &limits, MaxObjectBytes: maxObject})
	if err != nil {
		ln.Close()
		return fail(err)
	}
	run.Server = srv
	if err := srv.Bootstrap(ctx); err != nil {
		ln.Close()
		return fail(fmt.Errorf("bootstrapping: %w", err))
	}
	tlsConfig, err := bundle.ServerTLSConfig()
	if err != nil {
		ln.Close()
		return fail(err)
	}
	served, err := srv.limitConnections(ln, limits.MaxConnections)
	if err != nil {
		ln.Close()
		return fail(err)
	}
	// Watches run until their context ends; cancelling the base context on
	// shutdown ends them, so a graceful stop does not wait out every watch.
	baseCtx, cancelBase := context.WithCancel(context.Background())
	run.httpServer = newSecureServer(srv.Handler(), tlsConfig, limits.IdleTimeout, slog.NewLogLogger(log.Handler(), slog.LevelDebug))
	run.httpServer.BaseContext = func(net.Listener) context.Context { return baseCtx }
	run.httpServer.RegisterOnShutdown(cancelBase)
	go func() {
		defer close(run.done)
		if err := run.httpServer.ServeTLS(served, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			run.serveErr = err
		}
	}()
	log.Info("API server listening", "url", run.URL, "kubeconfig", kubeconfig)
	return run, nil
}

func withDefaults(o Options) Options {
	if o.BindAddress == "" {
		o.BindAddress = "127.0.0.1"
	}
	if o.EtcdPrefix == "" {
		o.EtcdPrefix = "/registry"
	}
	if o.ServiceClusterIPRange == "" {
		o.ServiceClusterIPRange = "10.96.0.0/12"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CompactionInterval == 0 {
		o.CompactionInterval = 5 * time.Minute
	}
	return o
}

func connectEtcd(ctx context.Context, o Options, run *Running) (*clientv3.Client, error) {
	endpoints := o.EtcdServers
	// A restarted etcd child listens on new ports; the client moves there.
	var current atomic.Pointer[clientv3.Client]
	var sup *etcdproc.Supervisor
	switch {
	case len(endpoints) > 0:
	case len(o.EtcdMemberCommand) > 0:
		var err error
		sup, err = etcdproc.Start(ctx, etcdproc.Config{
			Command:      o.EtcdMemberCommand,
			DataDir:      filepath.Join(o.DataDir, "etcd"),
			Logger:       o.Logger,
			ReadyTimeout: o.EtcdReadyTimeout,
			OnRestart: func(eps []string) {
				if c := current.Load(); c != nil {
					c.SetEndpoints(eps...)
				}
			},
		})
		if err != nil {
			return nil, err
		}
		run.closers = append(run.closers, sup.Close)
		endpoints = sup.Endpoints()
	default:
		e, err := storage.StartEmbedded(ctx, filepath.Join(o.DataDir, "etcd"), o.Logger)
		if err != nil {
			return nil, fmt.Errorf("starting embedded etcd: %w", err)
		}
		run.closers = append(run.closers, e.Close)
		endpoints = e.Endpoints()
	}
	client, err := storage.Connect(ctx, storage.ClientConfig{Endpoints: endpoints,
		CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	current.Store(client)
	if sup != nil && !slices.Equal(sup.Endpoints(), endpoints) {
		// It restarted while we connected.
		client.SetEndpoints(sup.Endpoints()...)
	}
	// Close the client before the embedded server it talks to.
	run.closers = append([]func() error{client.Close}, run.closers...)
	return client, nil
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

// Wait blocks until the server stops, and returns why.
func (r *Running) Wait() error {
	<-r.done
	return r.serveErr
}

// Stop shuts the server down gracefully: open requests (including watches)
// get until ctx ends, then storage is closed.
func (r *Running) Stop(ctx context.Context) error {
	var err error
	r.stopOnce.Do(func() {
		if r.httpServer != nil {
			err = r.httpServer.Shutdown(ctx)
			if err != nil {
				_ = r.httpServer.Close()
			}
			<-r.done
		}
		if cerr := r.closeAll(); err == nil {
			err = cerr
		}
	})
	return err
}

func (r *Running) closeAll() error {
	var errs []error
	for _, c := range r.closers {
		if err := c(); err != nil {
			errs = append(errs, err)
		}
	}
	r.closers = nil
	return errors.Join(errs...)
}
