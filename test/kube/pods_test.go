package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// A pod of the install runs as a host process, since the agents run no
// containers: its container's args, with the binary of its image, in a
// mount namespace of its own where, as a container runtime mounts them,
// the pod's service account token (TokenRequest, bound to the pod, as
// kubelet's projected volume) and the cluster CA are on
// /var/run/secrets/kubernetes.io/serviceaccount and the resolv.conf the
// agent wrote for the pod is /etc/resolv.conf. KUBERNETES_SERVICE_HOST and
// _PORT name the API server directly: there is no kube-proxy for the
// kubernetes Service. So the process has the pod's identity and no other,
// which proves the install's RBAC.
const podScript = `set -e
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/secrets/kubernetes.io/serviceaccount
mount --bind "$DNSPLANE_SA_DIR" /run/secrets/kubernetes.io/serviceaccount
mount --bind "$DNSPLANE_RESOLV_CONF" /etc/resolv.conf
unset DNSPLANE_SA_DIR DNSPLANE_RESOLV_CONF
exec "$@"
`

// podIdentity writes the pod's service account files and a kubeconfig of
// its token, and returns their directory and the kubeconfig.
func (c *cluster) podIdentity(ctx context.Context, t testing.TB, pod *corev1.Pod) (dir, kubeconfig string) {
	t.Helper()
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := int64(3600)
	tr, err := c.cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp, BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", pod.Namespace, sa, err)
	}
	dir = filepath.Join(c.dir, "pods", pod.Namespace+"_"+pod.Name, "serviceaccount")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(c.serverCA)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": ca, "namespace": []byte(pod.Namespace)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kube"] = &clientcmdapi.Cluster{Server: c.server, CertificateAuthority: filepath.Join(dir, "ca.crt")}
	kc.AuthInfos[sa] = &clientcmdapi.AuthInfo{TokenFile: filepath.Join(dir, "token")}
	kc.Contexts["kube"] = &clientcmdapi.Context{Cluster: "kube", AuthInfo: sa, Namespace: pod.Namespace}
	kc.CurrentContext = "kube"
	kubeconfig = filepath.Join(filepath.Dir(dir), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return dir, kubeconfig
}

// runPod runs the first container of pod (Running, with its IP) as a host
// process; edit changes its args (given the pod's kubeconfig).
func (c *cluster) runPod(ctx context.Context, t testing.TB, pod *corev1.Pod, edit func(args []string, kubeconfig string) []string) *process {
	t.Helper()
	saDir, kubeconfig := c.podIdentity(ctx, t, pod)
	ctr := pod.Spec.Containers[0]
	bin := dnsplaneBin
	if strings.Contains(ctr.Image, "dnsplane-dns") {
		bin = dnsBin
	}
	args := append([]string(nil), ctr.Args...)
	if edit != nil {
		args = edit(args, kubeconfig)
	}
	resolv := filepath.Join(podfiles.Dir(c.node(t, pod.Spec.NodeName).stateDir, pod.Namespace, pod.Name, pod.UID), "resolv.conf")
	env := []string{
		"DNSPLANE_SA_DIR=" + saDir, "DNSPLANE_RESOLV_CONF=" + resolv,
		"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=" + c.port(),
	}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil:
			env = append(env, e.Name+"="+fieldValue(pod, e.ValueFrom.FieldRef.FieldPath))
		}
	}
	p := startProcess(t, fmt.Sprintf("pod %s/%s (%s)", pod.Namespace, pod.Name, strings.Join(args, " ")), env,
		"unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", podScript, "sh", bin}, args...)...)
	c.stopWithPod(t, pod, p)
	return p
}

// stopWithPod stops p when its pod is deleted, as kubelet stops a deleted
// pod's containers (after an uninstall, say).
func (c *cluster) stopWithPod(t testing.TB, pod *corev1.Pod, p *process) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, false, func(ctx context.Context) (bool, error) {
			cur, err := c.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if ctx.Err() != nil {
				return true, nil
			}
			gone := apierrors.IsNotFound(err) || (err == nil && (cur.UID != pod.UID || cur.DeletionTimestamp != nil))
			if gone {
				_ = p.stop()
			}
			return gone || !p.running(), nil
		})
	}()
}

// fieldValue is the downward API's value of path for pod.
func fieldValue(pod *corev1.Pod, path string) string {
	switch path {
	case "metadata.name":
		return pod.Name
	case "metadata.namespace":
		return pod.Namespace
	case "spec.nodeName":
		return pod.Spec.NodeName
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName
	case "status.podIP":
		return pod.Status.PodIP
	case "status.hostIP":
		return pod.Status.HostIP
	}
	return ""
}

func (c *cluster) node(t testing.TB, name string) *node {
	t.Helper()
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	t.Fatalf("pod on node %q, which is not one of the test's", name)
	return nil
}

func (c *cluster) port() string { return c.server[strings.LastIndex(c.server, ":")+1:] }

// setFlag returns args with every --name removed and --name=value added.
func setFlag(args []string, name string, value string) []string {
	return append(dropFlags(args, name), "--"+name+"="+value)
}

// dropFlags returns args without the flags names, written --name=value,
// --name value, or --name alone (a bool flag, followed by another flag).
func dropFlags(args []string, names ...string) []string {
	var out []string
next:
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, n := range names {
			if strings.HasPrefix(a, "--"+n+"=") {
				continue next
			}
			if a == "--"+n {
				if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++ // its value
				}
				continue next
			}
		}
		out = append(out, a)
	}
	return out
}

// runningPods waits until the pods matching selector in ns are n, Running,
// with IPs and their files written, and returns them.
func (c *cluster) runningPods(ctx context.Context, t testing.TB, ns, selector string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, startTimeout, true, func(ctx context.Context) (bool, error) {
		l, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		pods = pods[:0]
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				pods = append(pods, p)
			}
		}
		return len(pods) == n, nil
	}); err != nil {
		t.Fatalf("waiting for %d running pods %q in %s: %v (have %d)", n, selector, ns, err, len(pods))
	}
	return pods
}

var (
	listenLine = regexp.MustCompile(`(?m)^(\S*):5353 \{$`)
	portArg    = regexp.MustCompile(`(?m)^(\s+(?:health|ready|prometheus)) :(\d+)`)
)

// podCorefile is the cluster DNS's Corefile as its pod sees it: the
// operator's server blocks listen on :5353 and the endpoints on :8080,
// :8181 and :9153 of every address, which in the pod's own network
// namespace are the pod's IP; here they are bound to the pod IP. Port 53
// with the Service's IP (vip, when not empty) beside it stands in for
// kube-proxy delivering the Service's 53 to the pods' 5353.
func podCorefile(corefile, podIP, vip string) string {
	s := listenLine.ReplaceAllString(corefile, "${1}:53 {\n    bind "+podIP+" "+vip)
	return portArg.ReplaceAllString(s, "${1} "+podIP+":${2}")
}
