package coredns

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/apiserver"
)

// startAPIServer runs dnsplane's API server in-process on embedded etcd in a
// temp dir, stopped when the test ends, and returns its admin kubeconfig and
// a client for it.
func startAPIServer(t testing.TB, ctx context.Context) (kubeconfig string, cs kubernetes.Interface) {
	t.Helper()
	run, err := apiserver.Start(ctx, apiserver.Options{DataDir: t.TempDir(), SecurePort: 0})
	if err != nil {
		t.Fatalf("starting API server: %v", err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = run.Stop(sctx)
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return run.Kubeconfig, client
}
