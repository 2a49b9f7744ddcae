package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubectlDrainUp: kubectl drain of `dnsplane up`'s node evicts its pods
// through pods/eviction; the node agent, as kubelet, sees the pod marked
// with its grace period and finishes the delete, so drain returns without
// --grace-period=0. The eviction's DisruptionTarget condition is what the
// pod was marked with.
func TestKubectlDrainUp(t *testing.T) {
	requireKubectl(t)
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil)
	kc := u.Kubeconfig
	ns := newNamespace(t, kc)
	mustKubectl(t, kc, `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: drain
spec:
  nodeName: `+upNode+`
  terminationGracePeriodSeconds: 5
  containers:
  - name: c
    image: nginx:1.27
`, "-n", ns, "apply", "-f", "-")
	mustKubectl(t, kc, "", "-n", ns, "wait", "pod/web", "--for=condition=Ready", "--timeout=60s")
	start := time.Now()
	out, errOut, code := kubectl(t, kc, "", "drain", upNode, "--force", "--timeout=60s", "--pod-selector=app=drain")
	if code != 0 || !strings.Contains(out, "evicting pod "+ns+"/web") || !strings.Contains(out, "pod/web evicted") {
		t.Fatalf("drain: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	t.Logf("kubectl drain of %s took %v", upNode, time.Since(start).Round(time.Millisecond))
	wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "web" not found`), "-n", ns, "get", "pod", "web")
	mustKubectl(t, kc, "", "uncordon", upNode)
}
