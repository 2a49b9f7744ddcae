package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// consecutive53 picks count consecutive unused 127.0.<third>.N:53
// addresses, free for UDP and TCP, and returns the first: the node caches
// of `up --nodes count` take it and the ones after it.
func consecutive53(t *testing.T, third, count int) string {
	t.Helper()
	free := func(addr string) bool {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		defer pc.Close()
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		l.Close()
		return true
	}
	for range 50 {
		first := netip.AddrFrom4([4]byte{127, 0, byte(third), byte(2 + rand.IntN(240))}) //nolint:gosec // 2-241
		ok, a := true, first
		for range count {
			if !free(netip.AddrPortFrom(a, 53).String()) {
				ok = false
				break
			}
			a = a.Next()
		}
		if ok {
			return netip.AddrPortFrom(first, 53).String()
		}
	}
	t.Fatalf("no %d consecutive free 127.0.%d.N:53", count, third)
	return ""
}

// TestNodes is `up --nodes 3` as a user of kind would try it: a Deployment
// spreads over the nodes, each pod's resolv.conf names its own node's
// cache, and a node stopped with `dnsplane node stop` turns Ready=Unknown,
// tainted unreachable, its pods' endpoints not ready, until `node start`.
// One `up` serves all subtests, in order.
func TestNodes(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	const nodes = 3
	dnsAddr := loopback53(t, 14)
	first := consecutive53(t, 24, nodes)
	cacheOf := map[string]string{} // node → its cache's address
	a := netip.MustParseAddrPort(first).Addr()
	for i := range nodes {
		cacheOf[fmt.Sprintf("node-%d", i+1)] = a.String()
		a = a.Next()
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	u := startUp(t, dataDir, nil, "--nodes", "3", "--dns-listen", dnsAddr, "--nodecache-listen", first,
		"--node-monitor-grace-period", "5s")
	client := clientFor(t, u.Kubeconfig)
	mustKubectl(t, u.Kubeconfig, "", "wait", "--for=condition=Ready", "node", "--all", "--timeout=60s")
	ns := newNamespace(t, u.Kubeconfig)
	mustKubectl(t, u.Kubeconfig, "", "create", "deployment", "web", "-n", ns, "--image=example", "--replicas=6")
	mustKubectl(t, u.Kubeconfig, "", "expose", "deployment", "web", "-n", ns, "--port=80")
	mustKubectl(t, u.Kubeconfig, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
	svcIP := mustKubectl(t, u.Kubeconfig, "", "get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.clusterIP}")

	pods, err := client.CoreV1().Pods(ns).List(ctxFor(t, 10*time.Second), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("spread", func(t *testing.T) {
		perNode := map[string]int{}
		for _, p := range pods.Items {
			perNode[p.Spec.NodeName]++
		}
		// The scheduler's default topology spreading is a preference
		// (ScheduleAnyway), so only "every node has some" is certain.
		for node := range cacheOf {
			if perNode[node] == 0 {
				t.Errorf("no pod on %s: %v", node, perNode)
			}
		}
		t.Logf("pods per node: %v", perNode)
	})

	t.Run("resolv.conf names its node's cache", func(t *testing.T) {
		for _, p := range pods.Items {
			out, errOut, code := nodesExec(t, dataDir, ns, p.Name, "cat", "/etc/resolv.conf")
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", p.Name, code, errOut)
			}
			var servers []string
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
					servers = append(servers, f[1])
				}
			}
			if want := []string{cacheOf[p.Spec.NodeName], hostOf(dnsAddr)}; !slices.Equal(servers, want) {
				t.Errorf("%s on %s: nameservers %v, want its node's cache then the cluster DNS %v\n%s", p.Name, p.Spec.NodeName, servers, want, out)
			}
			// kubectl exec reaches the same files through the API
			// server and that node's own exec server.
			if got := mustKubectl(t, u.Kubeconfig, "", "exec", "-n", ns, p.Name, "--", "cat", "/etc/resolv.conf"); got != out {
				t.Errorf("%s: kubectl exec read %q, dnsplane exec %q", p.Name, got, out)
			}
		}
	})

	t.Run("glibc resolves the Service through each node's cache", func(t *testing.T) {
		seen := map[string]bool{}
		for _, p := range pods.Items {
			if seen[p.Spec.NodeName] {
				continue
			}
			seen[p.Spec.NodeName] = true
			out, errOut, code := nodesExec(t, dataDir, ns, p.Name, "getent", "hosts", "web")
			if code != 0 || !strings.HasPrefix(out, svcIP+" ") {
				t.Errorf("%s on %s: getent hosts web: %q (exit %d, %s); want %s", p.Name, p.Spec.NodeName, out, code, errOut, svcIP)
			}
		}
	})

	t.Run("node stop", func(t *testing.T) {
		out, errOut, code := nodeCommand(t, dataDir, "stop", "node-2")
		if code != 0 || out != "node node-2 stopped\n" {
			t.Fatalf("node stop node-2: %q %q exit %d", out, errOut, code)
		}
		if err := queryA(cacheOf["node-2"], "kubernetes.default.svc.cluster.local."); err == nil {
			t.Errorf("node-2's cache %s still answers after node stop", cacheOf["node-2"])
		}
		// While node-2 goes, the others stay Ready throughout: their
		// Leases are renewed well within the 5s grace period.
		var flapped []string
		waitUntil(t, time.Minute, "node-2 Ready=Unknown with both unreachable taints", func(ctx context.Context) (bool, string) {
			all, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			var n *corev1.Node
			for i := range all.Items {
				switch node := &all.Items[i]; {
				case node.Name == "node-2":
					n = node
				case nodeReady(node) != corev1.ConditionTrue:
					flapped = append(flapped, fmt.Sprintf("%s Ready=%s", node.Name, nodeReady(node)))
				}
			}
			if n == nil {
				return false, "no node-2"
			}
			ready := nodeReady(n)
			var effects []string
			for _, tn := range n.Spec.Taints {
				if tn.Key == corev1.TaintNodeUnreachable {
					effects = append(effects, string(tn.Effect))
				}
			}
			slices.Sort(effects)
			return ready == corev1.ConditionUnknown && slices.Equal(effects, []string{"NoExecute", "NoSchedule"}),
				fmt.Sprintf("Ready=%s, unreachable taints %v", ready, effects)
		})
		if flapped != nil {
			t.Errorf("other nodes not Ready while only node-2 stopped: %v", flapped)
		}
		waitUntil(t, time.Minute, "node-2's endpoints not ready, the others ready", func(ctx context.Context) (bool, string) {
			return endpointsReady(ctx, client, ns, map[string]bool{"node-1": true, "node-2": false, "node-3": true})
		})
		if n, _ := client.CoreV1().Nodes().Get(ctxFor(t, 10*time.Second), "node-1", metav1.GetOptions{}); nodeReady(n) != corev1.ConditionTrue {
			t.Errorf("node-1 Ready=%s while only node-2 stopped", nodeReady(n))
		}
		_, errOut, code = nodeCommand(t, dataDir, "stop", "node-9")
		if code != 1 || errOut != "error: no node node-9; nodes: node-1, node-2, node-3\n" {
			t.Errorf("node stop node-9: %q exit %d", errOut, code)
		}
	})

	t.Run("node start", func(t *testing.T) {
		out, errOut, code := nodeCommand(t, dataDir, "start", "node-2")
		if code != 0 || out != "node node-2 started\n" {
			t.Fatalf("node start node-2: %q %q exit %d", out, errOut, code)
		}
		waitUntil(t, time.Minute, "node-2 Ready, untainted", func(ctx context.Context) (bool, string) {
			n, err := client.CoreV1().Nodes().Get(ctx, "node-2", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return nodeReady(n) == corev1.ConditionTrue && len(n.Spec.Taints) == 0, fmt.Sprintf("Ready=%s, taints %v", nodeReady(n), n.Spec.Taints)
		})
		waitUntil(t, time.Minute, "every endpoint ready again", func(ctx context.Context) (bool, string) {
			return endpointsReady(ctx, client, ns, map[string]bool{"node-1": true, "node-2": true, "node-3": true})
		})
		if err := queryA(cacheOf["node-2"], "kubernetes.default.svc.cluster.local."); err != nil {
			t.Errorf("node-2's cache after node start: %v", err)
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "node-2" {
				// The exec server is back, where the Node says it is.
				if got := mustKubectl(t, u.Kubeconfig, "", "exec", "-n", ns, p.Name, "--", "getent", "hosts", "web"); !strings.HasPrefix(got, svcIP+" ") {
					t.Errorf("%s after node start: kubectl exec getent hosts web: %q", p.Name, got)
				}
				break
			}
		}
	})
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	if n == nil {
		return ""
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// endpointsReady says whether the Service web's endpoints are ready on the
// nodes of want exactly as want says.
func endpointsReady(ctx context.Context, client kubernetes.Interface, ns string, want map[string]bool) (bool, string) {
	eps, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
	if err != nil {
		return false, err.Error()
	}
	var got []string
	okAll, count := true, 0
	for _, s := range eps.Items {
		for _, e := range s.Endpoints {
			node, ready := "", false
			if e.NodeName != nil {
				node = *e.NodeName
			}
			if e.Conditions.Ready != nil {
				ready = *e.Conditions.Ready
			}
			count++
			got = append(got, fmt.Sprintf("%s@%s ready=%v", e.Addresses, node, ready))
			if ready != want[node] {
				okAll = false
			}
		}
	}
	return okAll && count == 6, strings.Join(got, ", ")
}

// queryA asks server:53 for name once over UDP.
func queryA(server, name string) error {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", net.JoinHostPort(server, "53"))
	}}
	c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := r.LookupHost(c, name)
	return err
}

// nodeCommand runs `dnsplane node ACTION NAME --data-dir dataDir`.
func nodeCommand(t *testing.T, dataDir string, args ...string) (string, string, int) {
	t.Helper()
	return runDnsplane(t, append(append([]string{"node"}, args...), "--data-dir", dataDir)...)
}

// nodesExec runs `dnsplane exec --data-dir` for a pod: it finds the pod's
// node's state dir from spec.nodeName.
func nodesExec(t *testing.T, dataDir, ns, pod string, argv ...string) (string, string, int) {
	t.Helper()
	return runDnsplane(t, append([]string{"exec", "--data-dir", dataDir, "-n", ns, pod, "--"}, argv...)...)
}

func runDnsplane(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(ctxFor(t, 60*time.Second), dnsplaneBin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("dnsplane %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}
