// Package controlplanetest starts a control plane in-process for tests, in
// the spirit of kube-apiserver's testserver and net/http/httptest: embedded
// etcd in a temp dir, a free port on 127.0.0.1, stopped when the test ends.
package controlplanetest

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/controlplane"
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
// EtcdMemberCommand), a 10s graceful stop. It fails the test when the
// server does not come up within a minute, and stops it when the test ends.
func StartTestServer(t testing.TB, c controlplane.Config) *TestServer {
	t.Helper()
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
