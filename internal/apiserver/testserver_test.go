package apiserver

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/features"
	"github.com/dnsplane/dnsplane/internal/ipalloc"
	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// testRunning is what the tests of this package need of a served API
// server. internal/controlplane assembles the real one and its test server
// (controlplanetest) imports this package, so tests inside it (they reach
// into the Server) put the same parts together here: in-process embedded
// etcd, the PKI and admin token, and ServeTLS on a free loopback port.
type testRunning struct {
	URL        string
	Kubeconfig string
	Server     *Server
	serving    *Serving
	closers    []func() error
	// informers are those of the server's loopback client, and
	// stopInformers ends them.
	informers     informers.SharedInformerFactory
	stopInformers func()
}

// waitInformers waits until the server's informers have listed once.
func (r *testRunning) waitInformers(ctx context.Context) error {
	for typ, ok := range r.informers.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer of %v did not sync", typ)
		}
	}
	return nil
}

func startRunning(ctx context.Context, dir string, cfg Config) (_ *testRunning, err error) {
	run := &testRunning{}
	defer func() {
		if err != nil {
			_ = run.Stop(context.Background())
		}
	}()
	etcd, err := storage.StartEmbedded(ctx, filepath.Join(dir, "etcd"), nil)
	if err != nil {
		return nil, err
	}
	run.closers = append(run.closers, etcd.Close)
	client, err := storage.Connect(ctx, etcd.ClientConfig())
	if err != nil {
		return nil, err
	}
	run.closers = append([]func() error{client.Close}, run.closers...)
	store := storage.New(client, "/registry")
	ips, err := ipalloc.New(store, "10.96.0.0/12")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	bundle, err := pki.Ensure(filepath.Join(dir, "pki"), []string{"localhost", "127.0.0.1"})
	if err != nil {
		ln.Close()
		return nil, err
	}
	run.URL = "https://" + ln.Addr().String()
	kubeconfig, tokenFile, err := pki.EnsureAdmin(dir, run.URL, bundle)
	if err != nil {
		ln.Close()
		return nil, err
	}
	run.Kubeconfig = kubeconfig
	tokens, err := authn.LoadTokenFile(tokenFile)
	if err != nil {
		ln.Close()
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(bundle.CA)
	cfg.Store, cfg.ServiceIPs, cfg.SecurePort = store, ips, port
	cfg.Authenticator = authn.Union(authn.X509{Roots: roots}, tokens)
	if cfg.ServiceAccountKey == nil {
		if cfg.ServiceAccountKey, err = pki.EnsureServiceAccountKey(filepath.Join(dir, "pki")); err != nil {
			ln.Close()
			return nil, err
		}
		cfg.ServiceAccountIssuer = testIssuer
	}
	cfg.MaxObjectBytes = EmbeddedEtcdMaxObjectBytes
	// The informers admission reads, of a client of the server itself, as
	// internal/controlplane gives them (kube-apiserver's loopback client
	// and VersionedInformers), started once it serves.
	if cfg.Informers == nil {
		loopback, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			ln.Close()
			return nil, err
		}
		loopback.QPS = -1
		if cfg.Loopback, err = kubernetes.NewForConfig(loopback); err != nil {
			ln.Close()
			return nil, err
		}
		cfg.Informers = informers.NewSharedInformerFactory(cfg.Loopback, 10*time.Minute)
	}
	pods := &PodSource{}
	pods.Register(cfg.Informers)
	srv, err := New(cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	run.Server = srv
	pods.Attach(srv)
	// The bootstrap objects tests rely on (internal/controlplane creates
	// them all in a real cluster).
	for _, obj := range []runtime.Object{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		&corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}}},
	} {
		if err := srv.EnsureObject(ctx, obj); err != nil {
			ln.Close()
			return nil, err
		}
	}
	tlsConfig, err := bundle.ServerTLSConfig()
	if err != nil {
		ln.Close()
		return nil, err
	}
	if run.serving, err = srv.ServeTLS(ln, tlsConfig); err != nil {
		ln.Close()
		return nil, err
	}
	stop := make(chan struct{})
	cfg.Informers.Start(stop)
	run.informers = cfg.Informers
	run.stopInformers = func() {
		close(stop)
		cfg.Informers.Shutdown()
	}
	return run, nil
}

// Stop shuts the server down gracefully, then closes storage.
func (r *testRunning) Stop(ctx context.Context) error {
	var err error
	if r.stopInformers != nil {
		r.stopInformers()
		r.stopInformers = nil
	}
	if r.serving != nil {
		err = r.serving.Shutdown(ctx)
	}
	for _, c := range r.closers {
		if cerr := c(); err == nil {
			err = cerr
		}
	}
	r.closers = nil
	return err
}

// startTestServer starts an API server in dir with the given feature gates.
func startTestServer(t testing.TB, dir, gates string) *testServer {
	t.Helper()
	fg, err := features.Parse(gates)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := startRunning(ctx, dir, Config{Gates: fg, BookmarkInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatalf("starting API server: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{run: run, config: cfg, client: kubernetes.NewForConfigOrDie(cfg), dir: dir}
}

// testIssuer is the service account token issuer of the test servers.
const testIssuer = "https://kubernetes.default.svc.cluster.local"
