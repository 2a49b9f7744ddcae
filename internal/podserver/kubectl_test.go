package podserver_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/agentdial"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
	"github.com/dnsplane/dnsplane/internal/podserver"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// apiPods looks pods up through the API, as a stand-in for the agent's.
type apiPods struct{ c kubernetes.Interface }

func (p apiPods) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	pod, err := p.c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, podserver.ErrPodNotFound
	}
	return pod, err
}

const (
	resolv = "search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
	hosts  = "127.0.0.1\tlocalhost\n10.244.0.7\tweb.ns1.kubectl-test.example web\n"
)

// TestKubectl runs the real kubectl against the in-process API server,
// which proxies pods/exec to an in-process exec server as kube-apiserver
// proxies it to kubelet.
func TestKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (mount namespaces)")
	}
	ctx := t.Context()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	agentPort := l.Addr().(*net.TCPAddr).Port
	// The agent runs outside the API server's process, on loopback: the
	// API server dials it because its rules say so, and nothing else there.
	ts := controlplanetest.StartTestServer(t, controlplane.Config{AgentRules: agentdial.Rules{
		Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Ports: []uint16{uint16(agentPort)}}}) //nolint:gosec // a TCP port
	c := ts.Client

	// The agent's side: its serving certificate from the cluster CA, its
	// exec server, its Node and a pod's files.
	b, err := pki.Ensure(filepath.Join(ts.DataDir, "pki"), nil)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := pki.EnsureAgentServing(t.TempDir(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(b.CA)
	state := t.TempDir()
	srv, err := podserver.New(podserver.Config{StateDir: state, Pods: apiPods{c}, ClientCA: roots, Cert: cert, PodexecCommand: []string{os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, l) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	node := func(name string, port int32, addr ...string) {
		n, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		if len(addr) > 0 {
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr[0]}}
		}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node("node-1", int32(l.Addr().(*net.TCPAddr).Port))
	node("node-silent", 0)
	// Nodes whose writer names endpoints of its choice (issue 22 item 4):
	// a port on the API server's host that is not the agent's, which is
	// open (the API server's own), and a Service IP.
	apiPort := ts.URL[strings.LastIndexByte(ts.URL, ':')+1:]
	apiPortN, err := strconv.Atoi(apiPort)
	if err != nil {
		t.Fatal(err)
	}
	node("node-other-port", int32(apiPortN))               //nolint:gosec // a TCP port
	node("node-service-ip", int32(agentPort), "10.96.0.1") //nolint:gosec // a TCP port
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, nodeName string) *corev1.Pod {
		p, err := c.CoreV1().Pods("ns1").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	web := pod("web", "node-1")
	pod("unscheduled", "")
	pod("silent", "node-silent")
	pod("nofiles", "node-1")
	pod("other-port", "node-other-port")
	pod("service-ip", "node-service-ip")
	dir := podfiles.Dir(state, "ns1", "web", web.UID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{podfiles.ResolvConf: resolv, podfiles.Hosts: hosts} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The pod's sandbox, as its agent starts it (the test binary is
	// dnsplane, TestMain).
	alloc, err := podsandbox.NewAllocator(t.TempDir(), podsandbox.DefaultFirstBase, podsandbox.DefaultRanges)
	if err != nil {
		t.Fatal(err)
	}
	boxes, err := podsandbox.NewManager(podsandbox.Config{StateDir: state, Allocator: alloc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(boxes.Close)
	if err := boxes.Ensure(ctx, podsandbox.Pod{Namespace: "ns1", Name: "web", UID: web.UID, Hostname: "web", Dir: dir}); err != nil {
		t.Fatal(err)
	}

	run := func(env []string, stdin string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	for _, proto := range []struct {
		name string
		env  []string
	}{
		{"websocket", nil},
		{"spdy", []string{"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false"}},
	} {
		t.Run(proto.name, func(t *testing.T) {
			out, errOut, code := run(proto.env, "", "exec", "-n", "ns1", "web", "--", "cat", "/etc/resolv.conf")
			if code != 0 || out != resolv {
				t.Errorf("exec cat: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			out, errOut, code = run(proto.env, "", "exec", "-n", "ns1", "web", "-c", "main", "--", "getent", "hosts", "web.ns1.kubectl-test.example")
			if code != 0 || !strings.HasPrefix(out, "10.244.0.7") {
				t.Errorf("exec getent: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			// Round trip of a trivial command, kubectl start-up included.
			const n = 5
			start := time.Now()
			for range n {
				if _, errOut, code := run(proto.env, "", "exec", "-n", "ns1", "web", "--", "true"); code != 0 {
					t.Fatalf("exec true: exit %d, stderr %q", code, errOut)
				}
			}
			t.Logf("kubectl exec -- true over %s: %v per run (mean of %d)", proto.name, time.Since(start)/n, n)
			out, errOut, code = run(proto.env, "hello\n", "exec", "-i", "-n", "ns1", "web", "--", "sh", "-c", "cat; echo oops >&2; exit 3")
			if code != 3 || out != "hello\n" || !strings.Contains(errOut, "oops") {
				t.Errorf("exec stdin/exit: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			// The pod sets no user: nobody runs the command.
			if out, errOut, code := run(proto.env, "", "exec", "-n", "ns1", "web", "--", "id", "-u"); code != 0 || out != "65534\n" {
				t.Errorf("exec id -u: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			// A killed kubectl leaves no command behind (issue 22 item 3).
			arg := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e6)
			k := exec.CommandContext(ctx, kubectl, "--kubeconfig", ts.Kubeconfig, "exec", "-n", "ns1", "web", "--", "sleep", arg)
			k.Env = append(os.Environ(), proto.env...)
			if err := k.Start(); err != nil {
				t.Fatal(err)
			}
			waitProcs(t, arg, 1)
			if err := k.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = k.Wait() // killed
			waitProcs(t, arg, 0)
		})
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no such pod", []string{"exec", "-n", "ns1", "nosuch", "--", "true"}, `pods "nosuch" not found`},
		{"no node", []string{"exec", "-n", "ns1", "unscheduled", "--", "true"}, "pod unscheduled does not have a host assigned"},
		{"node without endpoint", []string{"exec", "-n", "ns1", "silent", "--", "true"}, `node "node-silent" of pod ns1/silent has no exec endpoint`},
		{"no files", []string{"exec", "-n", "ns1", "nofiles", "--", "true"}, "pod ns1/nofiles has no DNS files yet"},
		{"agent port not allowed", []string{"exec", "-n", "ns1", "other-port", "--", "true"},
			fmt.Sprintf(`the API server does not dial 127.0.0.1:%s for node "node-other-port"'s agent: port %s is not an agent port (%d)`, apiPort, apiPort, agentPort)},
		{"service IP", []string{"exec", "-n", "ns1", "service-ip", "--", "true"},
			fmt.Sprintf(`the API server does not dial 10.96.0.1:%d for node "node-service-ip"'s agent: 10.96.0.1 is in 10.96.0.0/12, which holds no agents`, agentPort)},
		{"bad container", []string{"exec", "-n", "ns1", "web", "-c", "other", "--", "true"}, "container other is not valid for pod web"},
		{"logs", []string{"logs", "-n", "ns1", "web"}, "dnsplane runs no containers: pod ns1/web has no logs; use `dnsplane exec` or `kubectl exec` to run a command with the pod's DNS files"},
		{"attach", []string{"attach", "-n", "ns1", "web"}, "dnsplane runs no containers: pod ns1/web has no process to attach to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(nil, "", tc.args...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, tc.want)
			}
			t.Logf("kubectl %s: %s", strings.Join(tc.args, " "), strings.TrimSpace(errOut))
		})
	}
}

// waitProcs polls until want sleep processes have arg in their command
// line (unique to the test: others on the machine may run their own sleep).
func waitProcs(t *testing.T, arg string, want int) {
	t.Helper()
	testkit.PollEvery(t, fmt.Sprintf("%d processes with %q", want, arg), 20*time.Millisecond, 15*time.Second, func(context.Context) (bool, error) {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return false, err
		}
		var got []string
		for _, e := range ents {
			// A sleep's, not kubectl's, whose command line has arg too.
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if args := strings.Split(string(cmdline), "\x00"); err == nil && filepath.Base(args[0]) == "sleep" && slices.Contains(args, arg) {
				got = append(got, e.Name())
			}
		}
		return len(got) == want, fmt.Errorf("pids %v", got)
	})
}
