package e2e

import (
	"strings"
	"testing"
)

// TestKubectlScale: kubectl scale finds deployments/scale in discovery
// (autoscaling/v1 Scale) and patches it; the deployment's spec.replicas
// follows.
func TestKubectlScale(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	mustKubectl(t, kc, webDeployment("1"), "-n", ns, "apply", "-f", "-")
	wantKubectl(t, kc, "", ok("deployment.apps/web scaled"), "-n", ns, "scale", "deployment/web", "--replicas=3")
	if got := jsonpath(t, kc, ns, "deployment", "web", "{.spec.replicas}"); got != "3" {
		t.Errorf("replicas after scale: %q", got)
	}
	// --current-replicas makes kubectl get the Scale and update it.
	wantKubectl(t, kc, "", ok("deployment.apps/web scaled"), "-n", ns, "scale", "deployment/web", "--current-replicas=3", "--replicas=0")
	if got := jsonpath(t, kc, ns, "deployment", "web", "{.spec.replicas}"); got != "0" {
		t.Errorf("replicas after the second scale: %q", got)
	}
}

const boundPod = `apiVersion: v1
kind: Pod
metadata:
  name: bound
spec:
  nodeName: n1
  terminationGracePeriodSeconds: 45
  containers:
  - name: c
    image: nginx:1.27
`

// TestKubectlDeleteBoundPod: deleting a pod a node runs marks it for its
// grace period; --grace-period=0 --force removes it.
func TestKubectlDeleteBoundPod(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	mustKubectl(t, kc, boundPod, "-n", ns, "apply", "-f", "-")
	// kubectl delete waits for the object to go by default; nothing
	// here plays the kubelet, so it must not wait.
	wantKubectl(t, kc, "", ok(`pod "bound" deleted`), "-n", ns, "delete", "pod", "bound", "--wait=false")
	if got := jsonpath(t, kc, ns, "pod", "bound", "{.metadata.deletionGracePeriodSeconds}"); got != "45" {
		t.Errorf("deletionGracePeriodSeconds = %q, want 45", got)
	}
	if got := jsonpath(t, kc, ns, "pod", "bound", "{.metadata.deletionTimestamp}"); got == "" {
		t.Error("no deletionTimestamp")
	}
	out, errOut, code := kubectl(t, kc, "", "-n", ns, "delete", "pod", "bound", "--grace-period=0", "--force")
	if code != 0 || out != "pod \"bound\" force deleted\n" || !strings.Contains(errOut, "Immediate deletion does not wait") {
		t.Errorf("force delete: exit %d\nstdout: %q\nstderr: %q", code, out, errOut)
	}
	wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "bound" not found`), "-n", ns, "get", "pod", "bound")
}

// TestKubectlDrain: kubectl drain finds pods/eviction in discovery and
// evicts through it; a PodDisruptionBudget that allows no disruption stops
// it with kube-apiserver's 429 (docs/apiserver.md, "Eviction"), and
// without the budget the node is drained. Nothing here plays the kubelet,
// so the evictions delete with --grace-period=0.
func TestKubectlDrain(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	node := ns + "-node"
	mustKubectl(t, kc, "apiVersion: v1\nkind: Node\nmetadata:\n  name: "+node+"\n", "apply", "-f", "-")
	t.Cleanup(func() { kubectl(t, kc, "", "delete", "node", node, "--wait=false") })
	mustKubectl(t, kc, `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  nodeName: `+node+`
  containers:
  - name: c
    image: nginx:1.27
`, "-n", ns, "apply", "-f", "-")
	// A running, ready pod; an unscheduled or pending one is evicted
	// without a look at budgets.
	mustKubectl(t, kc, "", "-n", ns, "patch", "pod", "web", "--subresource=status", "--type=merge",
		"-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	mustKubectl(t, kc, `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: web
`, "-n", ns, "apply", "-f", "-")
	// What kube-controller-manager's disruption controller would write:
	// one healthy pod, one needed, no disruption allowed.
	mustKubectl(t, kc, "", "-n", ns, "patch", "pdb", "web", "--subresource=status", "--type=merge",
		"-p", `{"status":{"observedGeneration":1,"currentHealthy":1,"desiredHealthy":1,"expectedPods":1,"disruptionsAllowed":0}}`)

	drain := []string{"drain", node, "--force", "--grace-period=0", "--timeout=4s", "--pod-selector=app=web"}
	out, errOut, code := kubectl(t, kc, "", drain...)
	if code == 0 || !strings.Contains(errOut, "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Errorf("drain with a budget allowing nothing: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if got := jsonpath(t, kc, ns, "pod", "web", "{.metadata.name}"); got != "web" {
		t.Errorf("the budget let the pod go: %q", got)
	}
	if got := jsonpath(t, kc, "", "node", node, "{.spec.unschedulable}"); got != "true" {
		t.Errorf("node not cordoned: unschedulable %q", got)
	}

	mustKubectl(t, kc, "", "-n", ns, "delete", "pdb", "web")
	out, errOut, code = kubectl(t, kc, "", drain...)
	if code != 0 || !strings.Contains(out, "evicting pod "+ns+"/web") || !strings.Contains(out, "pod/web evicted") || !strings.Contains(out, "node/"+node+" drained") {
		t.Errorf("drain: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	wantKubectl(t, kc, "", failed(`Error from server (NotFound): pods "web" not found`), "-n", ns, "get", "pod", "web")
}
