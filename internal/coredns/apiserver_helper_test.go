package coredns

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// startAPIServer runs dnsplane's API server in-process on embedded etcd in a
// temp dir, stopped when the test ends, and returns its admin kubeconfig and
// a client for it.
func startAPIServer(t testing.TB, _ context.Context) (kubeconfig string, cs kubernetes.Interface) {
	t.Helper()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	return ts.Kubeconfig, ts.Client
}
