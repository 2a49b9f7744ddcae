package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDNSOperatorStandalone: `dnsplane operator --kubeconfig F` run from a
// shell (no KUBERNETES_SERVICE_HOST, no service account) against a
// standalone `dnsplane apiserver` publishes the Corefile it publishes in a
// cluster, whose kubernetes plugin reads the API with the DNS pods' service
// account. Before, its dry load failed on the missing in-cluster
// configuration and nothing was ever published.
func TestDNSOperatorStandalone(t *testing.T) {
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		t.Setenv("KUBERNETES_SERVICE_HOST", "") // as a shell outside any pod
	}
	s := startServer(t, filepath.Join(t.TempDir(), "data"))
	op, err := startProcess("dnsplane operator", dnsplaneBin, "operator", "--kubeconfig", s.Kubeconfig, "--log-level", "debug")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := op.stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("log of the operator:\n%s", op.stderr.tail())
		}
	})
	cs := clientFor(t, s.Kubeconfig)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var corefile string
	eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
		cm, err := cs.CoreV1().ConfigMaps("dnsplane-system").Get(ctx, "dns-default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		corefile = cm.Data["Corefile"]
		return corefile != "", "no Corefile"
	})
	if !strings.Contains(corefile, "    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n") ||
		strings.Contains(corefile, "endpoint") || strings.Contains(corefile, "kubeconfig") {
		t.Errorf("published Corefile is not the cluster's (the kubernetes plugin must read the pods' service account):\n%s", corefile)
	}
	if strings.Contains(op.stderr.String(), "DryLoadFailed") || strings.Contains(op.stderr.String(), "does not load") {
		t.Errorf("the operator reported a dry load failure:\n%s", op.stderr.tail())
	}
}
