// Package controlplanetest starts a control plane in-process for tests, in
// the spirit of kube-apiserver's testserver and net/http/httptest: embedded
// etcd in a temp dir, a free port on 127.0.0.1, stopped when the test ends.
package controlplanetest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
)

// TestServer is a running control plane.
type TestServer struct {
	// ControlPlane is the started control plane (URL, Kubeconfig, Server).
	*controlplane.ControlPlane
	// ClientConfig is the admin's client config.
	ClientConfig *rest.Config
	// Client is a typed client for the admin.
	Client kubernetes.Interface
	// DataDir is the control plane's data dir.
	DataDir string
}

// StartTestServer starts a control plane with c and returns once it
// serves. Zero fields get test defaults: DataDir a new t.TempDir(),
// SecurePort 0 (a free port on 127.0.0.1), etcd embedded in-process (no
// EtcdMemberCommand), a 10s graceful stop. Unless c's roles run
// controllers (a controllersrole.Role), the deletion controllers run
// first, as `dnsplane apiserver` runs them by default, so that deletes
// finish as they do there. It fails the test when the server does not
// come up within a minute, and stops it when the test ends.
func StartTestServer(t testing.TB, c controlplane.Config) *TestServer {
	t.Helper()
	if !slices.ContainsFunc(c.Roles, func(r controlplane.Role) bool { _, ok := r.(*controllersrole.Role); return ok }) {
		c.Roles = append([]controlplane.Role{controllersrole.New(controllers.Options{})}, c.Roles...)
	}
	if c.DataDir == "" {
		c.DataDir = t.TempDir()
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, c)
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatalf("reading the admin kubeconfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	return &TestServer{ControlPlane: cp, ClientConfig: cfg, Client: client, DataDir: c.DataDir}
}

// ClientCertUser is the CN and O of the client certificate in kubeconfig.
func ClientCertUser(t testing.TB, kubeconfig string) (string, []string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		t.Fatalf("%s has no client certificate", kubeconfig)
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName, leaf.Subject.Organization
}
