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
