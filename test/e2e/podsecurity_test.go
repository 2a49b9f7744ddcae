package e2e

import (
	"fmt"
	"testing"
)

// TestPodSecurity: Pod Security admission with the real kubectl, as on
// kube-apiserver. `kubectl label ns X pod-security.kubernetes.io/enforce=baseline`
// makes the API server refuse a pod that uses the host's network with
// kube's 403 and message and admit a plain one; the warn label admits the
// pod and kubectl prints kube's warning. A privileged pod is refused by
// validation first, as by kube-apiserver with its default
// --allow-privileged=false.
func TestPodSecurity(t *testing.T) {
	requireKubectl(t)
	t.Parallel()
	kc := sharedServer(t).Kubeconfig
	podYAML := func(name, container string, hostNetwork bool) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  hostNetwork: %t\n  containers:\n  - name: c\n    image: busybox\n%s",
			name, hostNetwork, container)
	}
	host := podYAML("host", "", true)
	plain := podYAML("plain", "", false)
	privileged := podYAML("priv", "    securityContext:\n      privileged: true\n", false)

	enforce := newNamespace(t, kc)
	wantKubectl(t, kc, "", ok("namespace/"+enforce+" labeled"), "label", "ns", enforce, "pod-security.kubernetes.io/enforce=baseline")
	wantKubectl(t, kc, host, failed(`Error from server (Forbidden): error when creating "STDIN": pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`),
		"-n", enforce, "create", "-f", "-")
	wantKubectl(t, kc, privileged, failed(`The Pod "priv" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy`),
		"-n", enforce, "create", "-f", "-")
	wantKubectl(t, kc, plain, ok("pod/plain created"), "-n", enforce, "create", "-f", "-")

	warn := newNamespace(t, kc)
	wantKubectl(t, kc, "", ok("namespace/"+warn+" labeled"), "label", "ns", warn, "pod-security.kubernetes.io/warn=baseline")
	wantKubectl(t, kc, host, run{stdout: "pod/host created\n", stderr: `Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)` + "\n"},
		"-n", warn, "create", "-f", "-")
}
