package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestPodSecurity: Pod Security admission with the real kubectl, as on
// kube-apiserver. `kubectl label ns X pod-security.kubernetes.io/enforce=baseline`
// makes the API server refuse a pod that uses the host's network with
// kube's 403 and message and admit a plain one; the warn label admits the
// pod and kubectl prints kube's warning. A privileged pod is refused by
// validation first, as by kube-apiserver with its default
// --allow-privileged=false. Workloads are never refused: a Deployment
// whose template violates the enforce level is created and kubectl prints
// kube's warning; and labelling a stricter enforce level prints kube's
// warnings about the pods already in the namespace. (What the controllers
// then do with such a Deployment is TestCluster's "pod security".)
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
	wantKubectl(t, kc, hostNetworkDeployment("host"), run{stdout: "deployment.apps/host created\n", stderr: `Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)` + "\n"},
		"-n", enforce, "create", "-f", "-")
	// Stricter: the plain pod is named, and stays.
	wantKubectl(t, kc, "", run{stdout: "namespace/" + enforce + " labeled\n", stderr: fmt.Sprintf("Warning: existing pods in namespace %q violate the new PodSecurity enforce level \"restricted:latest\"\n", enforce) +
		"Warning: plain: " + restrictedReasons + "\n"},
		"label", "--overwrite", "ns", enforce, "pod-security.kubernetes.io/enforce=restricted")
	wantKubectl(t, kc, "", run{stdout: "deployment.apps/web created\n", stderr: `Warning: would violate PodSecurity "restricted:latest": ` + restrictedDetail("nginx") + "\n"},
		"-n", enforce, "create", "deployment", "web", "--image=nginx")
	wantKubectl(t, kc, "", run{stderr: `The Namespace "` + enforce + `" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "nonsense": must be one of privileged, baseline, restricted` + "\n", exit: 1},
		"label", "--overwrite", "ns", enforce, "pod-security.kubernetes.io/enforce=nonsense")

	warn := newNamespace(t, kc)
	wantKubectl(t, kc, "", ok("namespace/"+warn+" labeled"), "label", "ns", warn, "pod-security.kubernetes.io/warn=baseline")
	wantKubectl(t, kc, host, run{stdout: "pod/host created\n", stderr: `Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)` + "\n"},
		"-n", warn, "create", "-f", "-")
}

// TestAllowPrivileged: with `up --allow-privileged`, as with
// kube-apiserver's flag, a privileged pod is created in a namespace
// without Pod Security labels and exec into it (kubectl's and dnsplane's)
// runs as root with root's capabilities, the one way a command runs as root
// (docs/agent.md, "Who the command runs as"); a pod that is not privileged
// still runs as 65534 without capabilities; a namespace labelled
// enforce=baseline refuses the privileged pod with kube's 403. Without the
// flag validation refuses it (TestPodSecurity).
func TestAllowPrivileged(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	t.Parallel()
	dnsAddr, nodeAddr := loopback53(t, 72), loopback53(t, 72)
	for nodeAddr == dnsAddr {
		nodeAddr = loopback53(t, 72)
	}
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil, "--allow-privileged", "--dns-listen", dnsAddr, "--nodecache-listen", nodeAddr)
	k := u.Kubeconfig
	privileged := podManifest("priv", "ClusterFirst", "    securityContext:\n      privileged: true\n")
	const status = "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status"

	t.Run("unlabeled namespace", func(t *testing.T) {
		ns := newNamespace(t, k)
		wantKubectl(t, k, privileged, ok("pod/priv created"), "-n", ns, "create", "-f", "-")
		wantKubectl(t, k, podManifest("plain", "ClusterFirst", ""), ok("pod/plain created"), "-n", ns, "create", "-f", "-")
		mustKubectl(t, k, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "pod/priv", "pod/plain")

		wantKubectl(t, k, "", ok("0"), "-n", ns, "exec", "priv", "--", "id", "-u")
		caps := mustKubectl(t, k, "", "-n", ns, "exec", "priv", "--", "sh", "-c", status)
		if strings.Contains(caps, "CapEff:\t0000000000000000") || !strings.Contains(caps, "NoNewPrivs:\t0") {
			t.Errorf("kubectl exec into a privileged pod: %q, want root's capabilities and no no_new_privs", caps)
		}
		if out, errOut, code := runDnsplane(t, "exec", "--data-dir", u.DataDir, "-n", ns, "priv", "--", "id", "-u"); code != 0 || out != "0\n" {
			t.Errorf("dnsplane exec … priv -- id -u: exit %d, stdout %q, stderr %q; want 0", code, out, errOut)
		}

		wantKubectl(t, k, "", ok("65534"), "-n", ns, "exec", "plain", "--", "id", "-u")
		caps = mustKubectl(t, k, "", "-n", ns, "exec", "plain", "--", "sh", "-c", status)
		if want := "CapEff:\t0000000000000000\nNoNewPrivs:\t1\n"; caps != want {
			t.Errorf("kubectl exec into a pod that is not privileged: %q, want %q", caps, want)
		}
	})

	t.Run("enforce=baseline", func(t *testing.T) {
		ns := newNamespace(t, k)
		wantKubectl(t, k, "", ok("namespace/"+ns+" labeled"), "label", "ns", ns, "pod-security.kubernetes.io/enforce=baseline")
		wantKubectl(t, k, privileged, failed(`Error from server (Forbidden): error when creating "STDIN": pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)`),
			"-n", ns, "create", "-f", "-")
	})
}

// TestValidateAllowPrivileged: `dnsplane validate` checks as an API server
// with kube-apiserver's default --allow-privileged=false, and as one with
// the flag when given it. A process of its own each time: the setting is
// process-wide.
func TestValidateAllowPrivileged(t *testing.T) {
	t.Parallel()
	pod := writeFile(t, "priv.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: priv\nspec:\n  containers:\n  - name: c\n    image: busybox\n    securityContext:\n      privileged: true\n")
	tests := []struct {
		flags    []string
		wantOut  string
		wantCode int
	}{
		{nil, pod + ":10:7: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy\n", 1},
		{[]string{"--allow-privileged=false"}, pod + ":10:7: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy\n", 1},
		{[]string{"--allow-privileged"}, "", 0},
	}
	for _, tt := range tests {
		args := append([]string{"validate", "-q", "-f", pod}, tt.flags...)
		if out, errOut, code := runDnsplane(t, args...); code != tt.wantCode || out != tt.wantOut {
			t.Errorf("dnsplane %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q", strings.Join(args, " "), code, out, errOut, tt.wantCode, tt.wantOut)
		}
	}
}

// restrictedReasons is kube's short list of what the restricted level asks
// of a container that sets no securityContext (the warnings about existing
// pods).
const restrictedReasons = "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"

// restrictedDetail is kube's detail of the same for container c.
func restrictedDetail(c string) string {
	return fmt.Sprintf(`allowPrivilegeEscalation != false (container %[1]q must set securityContext.allowPrivilegeEscalation=false), `+
		`unrestricted capabilities (container %[1]q must set securityContext.capabilities.drop=["ALL"]), `+
		`runAsNonRoot != true (pod or container %[1]q must set securityContext.runAsNonRoot=true), `+
		`seccompProfile (pod or container %[1]q must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`, c)
}

// hostNetworkDeployment is a Deployment whose pods use the host's network,
// which the baseline level forbids.
func hostNetworkDeployment(name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      hostNetwork: true
      containers:
      - name: c
        image: busybox
`, name)
}
