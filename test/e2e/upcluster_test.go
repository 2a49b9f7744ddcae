package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// nodesUp is `dnsplane up --nodes N` with its DNS on its own loopback
// addresses on port 53, as pods' resolv.conf needs, and the flags it was
// started with, so that it can be started again the same way.
type nodesUp struct {
	*upServer
	args    []string          // up's flags after --data-dir
	cacheOf map[string]string // node name → its cache's IP
	nodes   []string          // node-1 … node-N
}

// startNodesUp starts `up --nodes n` over a new data dir, its cluster DNS
// on 127.0.<dnsThird>.X:53 and its node caches on consecutive addresses of
// 127.0.<cacheThird>.0/24, and waits until every Node is Ready.
func startNodesUp(t *testing.T, n, dnsThird, cacheThird int, extra ...string) *nodesUp {
	t.Helper()
	first := consecutive53(t, cacheThird, n)
	c := &nodesUp{cacheOf: map[string]string{}}
	a := netip.MustParseAddrPort(first).Addr()
	for i := range n {
		name := fmt.Sprintf("node-%d", i+1)
		c.nodes = append(c.nodes, name)
		c.cacheOf[name] = a.String()
		a = a.Next()
	}
	c.args = append([]string{"--nodes", fmt.Sprint(n), "--dns-listen", loopback53(t, dnsThird), "--nodecache-listen", first}, extra...)
	c.upServer = startUp(t, filepath.Join(t.TempDir(), "data"), nil, c.args...)
	mustKubectl(t, c.Kubeconfig, "", "wait", "--for=condition=Ready", "node", "--all", "--timeout=50s")
	return c
}

// interrupt stops up as Ctrl-C does (SIGINT to up alone: the harness is
// no terminal) and requires exit status 0; it returns how long the stop
// took.
func (c *nodesUp) interrupt(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("SIGINT to up: %v", err)
	}
	select {
	case <-c.exited:
	case <-time.After(stopTimeout):
		t.Fatalf("up did not exit within %v of SIGINT\n%s", stopTimeout, c.stderr.tail())
	}
	if c.err != nil {
		t.Fatalf("up after SIGINT: %v, want exit status 0\n%s", c.err, c.stderr.tail())
	}
	return time.Since(start)
}

// again starts up over the same data dir with the same flags, after the
// previous one exited, and returns how long it took to print its banner.
func (c *nodesUp) again(t *testing.T) time.Duration {
	t.Helper()
	if c.running() {
		t.Fatal("up still runs")
	}
	start := time.Now()
	c.upServer = startUp(t, c.DataDir, nil, c.args...)
	return time.Since(start)
}

// resolvConfPath is where the agent of the pod's node keeps the pod's
// resolv.conf: the node's state dir is <data-dir>/nodes/<node>
// (docs/nodes.md, "The nodes").
func (c *nodesUp) resolvConfPath(p *corev1.Pod) string {
	return filepath.Join(podfiles.Dir(filepath.Join(c.DataDir, "nodes", p.Spec.NodeName), p.Namespace, p.Name, p.UID), podfiles.ResolvConf)
}

// checkResolvConf says whether the pod's resolv.conf is there and names
// its own node's cache first and the cluster DNS second.
func (c *nodesUp) checkResolvConf(p *corev1.Pod) (string, error) {
	data, err := os.ReadFile(c.resolvConfPath(p))
	if err != nil {
		return "", err
	}
	got := nameservers(string(data))
	if want := []string{c.cacheOf[p.Spec.NodeName], hostOf(c.ClusterDNS)}; !slices.Equal(got, want) {
		return string(data), fmt.Errorf("%s on %s: nameservers %v, want its node's cache then the cluster DNS %v", p.Name, p.Spec.NodeName, got, want)
	}
	return string(data), nil
}

// nameservers are the addresses of a resolv.conf's nameserver lines, in
// order.
func nameservers(conf string) []string {
	var servers []string
	for line := range strings.Lines(conf) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
			servers = append(servers, f[1])
		}
	}
	return servers
}

// upHealthy asks whether every component of up is healthy, as a user
// can: the API server's /readyz, every Node Ready, the cluster DNS and
// every running node's cache answering kubernetes.default, and then
// `dnsplane status` (issue 21, item 2), which must agree: exit 0 with a
// Healthy line per component.
func (c *nodesUp) upHealthy(t *testing.T, when string) {
	t.Helper()
	cs := clientFor(t, c.Kubeconfig)
	waitUntil(t, time.Minute, when+": /readyz and every node Ready", func(ctx context.Context) (bool, string) {
		body, err := cs.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, fmt.Sprintf("/readyz: %v %s", err, body)
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var notReady []string
		for i := range nodes.Items {
			if n := &nodes.Items[i]; nodeReady(n) != corev1.ConditionTrue {
				notReady = append(notReady, n.Name+" Ready="+string(nodeReady(n)))
			}
		}
		return len(nodes.Items) == len(c.nodes) && notReady == nil, fmt.Sprintf("%d nodes, not ready: %v", len(nodes.Items), notReady)
	})
	servers := []string{c.ClusterDNS}
	for _, n := range c.nodes {
		servers = append(servers, c.cacheOf[n]+":53")
	}
	for _, s := range servers {
		waitAnswers(t, s, "kubernetes.default.svc.cluster.local", dns.TypeA, []string{"10.96.0.1"})
	}
	// API server, etcd, controllers, scheduler, DNS operator, cluster DNS,
	// and a node cache and an agent per node.
	want := 6 + 2*len(c.nodes)
	waitUntil(t, 30*time.Second, when+": dnsplane status exits 0", func(context.Context) (bool, string) {
		out, errOut, code := runDnsplane(t, "status", "--data-dir", c.DataDir)
		healthy := 0
		for line := range strings.Lines(out) {
			if f := strings.Fields(line); len(f) >= 2 && f[1] == "Healthy" {
				healthy++
			}
		}
		return code == 0 && healthy == want, fmt.Sprintf("exit %d, %d of %d lines Healthy:\n%s%s", code, healthy, want, out, errOut)
	})
}

// podState is what a restart must keep of a pod.
type podState struct {
	UID       string
	IP, Node  string
	ResolvCfg string
}

// TestUpRestartKeepsCluster is `up --nodes 3` as a new user meets it, then
// restarted (issue 21, "Tests"; TestNodes covers the nodes themselves): a
// Deployment of 6 spread over the nodes and exposed; the user sets a
// namespace in the admin kubeconfig; a node is stopped; Ctrl-C stops up
// (exit 0) and up starts again with the same flags. Everything is still
// there (the Deployment, its pods with the same UIDs, IPs and nodes, the
// Service, its EndpointSlices), every node runs again, up re-converges (a
// pod's resolv.conf deleted while up was down is back, endpoints ready,
// every node cache answers the Service, the Corefile ConfigMap unchanged),
// the kubeconfig edit is kept, and the restarted up's nodes stop and start.
func TestUpRestartKeepsCluster(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	c := startNodesUp(t, 3, 57, 58)
	kc := c.Kubeconfig
	client := clientFor(t, kc)

	ns := newNamespace(t, kc)
	mustKubectl(t, kc, "", "create", "deployment", "web", "-n", ns, "--image=example", "--replicas=6")
	mustKubectl(t, kc, "", "expose", "deployment", "web", "-n", ns, "--port=80")
	rolloutStatus(t, kc, ns, "deployment/web")
	pods := waitRunning(t, client, ns, "app=web", 6)
	svcIP := mustKubectl(t, kc, "", "get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.clusterIP}")
	deployUID := mustKubectl(t, kc, "", "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.metadata.uid}")
	ips := podIPs(pods)
	waitSlices(t, client, ns, "web", ips)

	perNode := map[string]int{}
	for _, p := range pods {
		perNode[p.Spec.NodeName]++
	}
	t.Logf("pods per node: %v", perNode)
	for _, n := range c.nodes {
		// The scheduler's default spreading is a preference (ScheduleAnyway):
		// "every node has one" is what holds on any machine.
		if perNode[n] == 0 {
			t.Errorf("no pod on %s: %v", n, perNode)
		}
	}

	before := map[string]podState{}
	for i := range pods {
		p := &pods[i]
		var conf string
		waitUntil(t, 30*time.Second, "resolv.conf of "+p.Name, func(context.Context) (bool, string) {
			var err error
			conf, err = c.checkResolvConf(p)
			return err == nil, fmt.Sprint(err)
		})
		before[p.Name] = podState{UID: string(p.UID), IP: p.Status.PodIP, Node: p.Spec.NodeName, ResolvCfg: conf}
	}
	name := "web." + ns + ".svc.cluster.local"
	for _, n := range c.nodes {
		waitAnswers(t, c.cacheOf[n]+":53", name, dns.TypeA, []string{svcIP})
	}
	corefile := mustKubectl(t, kc, "", "get", "configmap", "-n", "dnsplane-system", "dns-default", "-o", "jsonpath={.data.Corefile}")
	if corefile == "" {
		t.Fatal("no Corefile in dnsplane-system/dns-default")
	}
	mustKubectl(t, kc, "", "config", "set-context", "--current", "--namespace="+ns)
	c.upHealthy(t, "before the restart")

	// A node stopped when up stops is a machine that was off: the next up
	// starts every node of --nodes.
	if out, errOut, code := nodeCommand(t, c.DataDir, "stop", "node-3"); code != 0 || out != "node node-3 stopped\n" {
		t.Fatalf("node stop node-3: %q %q exit %d", out, errOut, code)
	}
	if err := queryA(c.cacheOf["node-3"], "kubernetes.default.svc.cluster.local."); err == nil {
		t.Errorf("node-3's cache %s still answers after node stop", c.cacheOf["node-3"])
	}

	stopped := c.interrupt(t)
	if _, err := os.Stat(filepath.Join(c.DataDir, "up.sock")); !os.IsNotExist(err) {
		t.Errorf("up.sock after a clean stop: %v, want none", err)
	}
	// A file lost while up was down is written again by its node's agent.
	lost := &pods[0]
	if err := os.Remove(c.resolvConfPath(lost)); err != nil {
		t.Fatal(err)
	}
	ready := c.again(t)
	restarted := time.Now()
	// --secure-port 0: the restarted API server has another port, which
	// it wrote into the kubeconfig.
	client = clientFor(t, kc)

	if out, _, code := nodeCommand(t, c.DataDir, "list"); code != 0 || out != "NAME\tSTATE\nnode-1\trunning\nnode-2\trunning\nnode-3\trunning\n" {
		t.Errorf("node list after the restart: %q exit %d, want all three running", out, code)
	}
	if got := mustKubectl(t, kc, "", "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.metadata.uid}"); got != deployUID {
		t.Errorf("Deployment web uid %s after the restart, was %s", got, deployUID)
	}
	if got := mustKubectl(t, kc, "", "get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.clusterIP}"); got != svcIP {
		t.Errorf("Service web clusterIP %s after the restart, was %s", got, svcIP)
	}
	after := waitRunning(t, client, ns, "app=web", 6)
	for i := range after {
		p := &after[i]
		b, ok := before[p.Name]
		if !ok {
			t.Errorf("pod %s after the restart is new; before: %v", p.Name, before)
			continue
		}
		if string(p.UID) != b.UID || p.Status.PodIP != b.IP || p.Spec.NodeName != b.Node {
			t.Errorf("pod %s after the restart: uid %s, IP %s, node %s; was %s, %s, %s", p.Name, p.UID, p.Status.PodIP, p.Spec.NodeName, b.UID, b.IP, b.Node)
		}
	}
	waitUntil(t, 30*time.Second, "every pod's resolv.conf as before the restart", func(context.Context) (bool, string) {
		for i := range after {
			p := &after[i]
			conf, err := c.checkResolvConf(p)
			if err != nil {
				return false, err.Error()
			}
			if conf != before[p.Name].ResolvCfg {
				return false, fmt.Sprintf("%s:\n%s\nwas:\n%s", p.Name, conf, before[p.Name].ResolvCfg)
			}
		}
		return true, ""
	})
	filesBack := time.Since(restarted)
	waitSlices(t, client, ns, "web", ips)
	endpointsBack := time.Since(restarted)
	for _, n := range c.nodes {
		waitAnswers(t, c.cacheOf[n]+":53", name, dns.TypeA, []string{svcIP})
	}
	waitAnswers(t, c.ClusterDNS, name, dns.TypeA, []string{svcIP})
	dnsBack := time.Since(restarted)
	if got := mustKubectl(t, kc, "", "get", "configmap", "-n", "dnsplane-system", "dns-default", "-o", "jsonpath={.data.Corefile}"); got != corefile {
		t.Errorf("Corefile after the restart:\n%s\nwas:\n%s", got, corefile)
	}
	// The namespace the user set is kept: kubectl without -n finds the
	// Deployment there.
	if got := mustKubectl(t, kc, "", "config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}"); got != ns {
		t.Errorf("kubeconfig's namespace after the restart: %q, want %q", got, ns)
	}
	if got := mustKubectl(t, kc, "", "get", "deployment", "web", "-o", "name"); got != "deployment.apps/web\n" {
		t.Errorf("kubectl get deployment web without -n: %q", got)
	}
	c.upHealthy(t, "after the restart")
	t.Logf("restart: SIGINT to exit 0 in %v, banner again in %v; then resolv.conf files in %v, endpoints ready in %v, every cache answers the Service in %v",
		stopped.Round(time.Millisecond), ready.Round(time.Millisecond), filesBack.Round(time.Millisecond),
		endpointsBack.Round(time.Millisecond), dnsBack.Round(time.Millisecond))

	// The restarted up's control socket acts on its nodes.
	if out, errOut, code := nodeCommand(t, c.DataDir, "stop", "node-2"); code != 0 || out != "node node-2 stopped\n" {
		t.Fatalf("node stop node-2 after the restart: %q %q exit %d", out, errOut, code)
	}
	if err := queryA(c.cacheOf["node-2"], "kubernetes.default.svc.cluster.local."); err == nil {
		t.Errorf("node-2's cache still answers after node stop")
	}
	if out, errOut, code := nodeCommand(t, c.DataDir, "start", "node-2"); code != 0 || out != "node node-2 started\n" {
		t.Fatalf("node start node-2 after the restart: %q %q exit %d", out, errOut, code)
	}
	// node start returns at once, the node's components starting in the
	// background (nodepower.Switch.Set): poll.
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		if err := queryA(c.cacheOf["node-2"], "kubernetes.default.svc.cluster.local."); err != nil {
			return false, fmt.Sprintf("node-2's cache after node start: %v", err)
		}
		return true, ""
	})
}
