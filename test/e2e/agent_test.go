package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// The resolver tests run real C libraries in a pod's view of /etc through
// `dnsplane exec` (docs/agent.md): glibc's getent and musl's getaddrinfo
// (test/resolvers/gai.c, built with musl-gcc). They need root (port 53 and
// mount namespaces) and Linux.

// upNode is the node name `up` registers for its agent.
const upNode = "dnsplane"

// requireRoot skips a test that needs port 53 and mount namespaces.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: pods' resolv.conf names port 53, and dnsplane exec creates a mount namespace")
	}
}

// buildGai builds test/resolvers/gai.c with compiler (musl-gcc or gcc).
func buildGai(t *testing.T, compiler string) string {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		t.Skipf("%s is not installed (apt-get install musl-tools; .ci/run installs it)", compiler)
	}
	out := filepath.Join(workDir, "gai-"+compiler)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	args := []string{"-O2", "-o", out, "../resolvers/gai.c"}
	if compiler == "musl-gcc" {
		// Static, so the musl binary needs no musl loader in the pod's view.
		args = append([]string{"-static"}, args...)
	}
	if b, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", compiler, args, err, b)
	}
	return out
}

// buildGaiIfPresent is buildGai for musl-gcc, or "" when it is missing.
func buildGaiIfPresent(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("musl-gcc"); err != nil {
		return ""
	}
	return buildGai(t, "musl-gcc")
}

// loopback53 picks an unused 127.0.<third>.N:53, free for UDP and TCP.
func loopback53(t *testing.T, third int) string {
	t.Helper()
	for range 50 {
		addr := fmt.Sprintf("127.0.%d.%d:53", third, 2+rand.IntN(250))
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			continue
		}
		l, err := net.Listen("tcp", addr)
		pc.Close()
		if err != nil {
			continue
		}
		l.Close()
		return addr
	}
	t.Fatalf("no free 127.0.%d.N:53", third)
	return ""
}

// zoneServer is an authoritative test upstream: A records for names in
// records, NODATA for their other types, NXDOMAIN for everything else.
type zoneServer struct{ Addr string }

func startZoneServer(t *testing.T, records map[string]string, delay time.Duration) *zoneServer {
	t.Helper()
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if delay > 0 {
			time.Sleep(delay)
		}
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		q := r.Question[0]
		ip, ok := records[strings.ToLower(q.Name)]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30},
				A:   net.ParseIP(ip),
			})
		}
		if len(m.Answer) == 0 {
			m.Ns = append(m.Ns, &dns.SOA{
				Hdr: dns.RR_Header{Name: "test.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 30},
				Ns:  "ns.test.", Mbox: "hostmaster.test.", Serial: 1, Refresh: 60, Retry: 60, Expire: 60, Minttl: 30,
			})
		}
		_ = w.WriteMsg(m)
	})
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	udp := &dns.Server{PacketConn: pc, Handler: h}
	tcp := &dns.Server{Listener: l, Handler: h}
	go func() { _ = udp.ActivateAndServe() }()
	go func() { _ = tcp.ActivateAndServe() }()
	t.Cleanup(func() { _ = udp.Shutdown(); _ = tcp.Shutdown() })
	return &zoneServer{Addr: addr}
}

// agentCluster is `dnsplane up` with its agent, DNS on port 53, a test
// upstream and a namespace with a Service.
type agentCluster struct {
	*upServer
	Metrics   string // the node cache's Prometheus ADDR:PORT
	Namespace string
	ServiceIP string
}

// externalRecords are what the test upstream serves: an external name
// and a name under the host's search domain corp.test.
var externalRecords = map[string]string{
	"www.example.test.":   "192.0.2.10",
	"intranet.corp.test.": "192.0.2.20",
}

func startAgentCluster(t *testing.T) *agentCluster {
	t.Helper()
	requireRoot(t)
	requireKubectl(t)
	up := startZoneServer(t, externalRecords, 0)
	hostConf := writeFile(t, "host-resolv.conf", "nameserver 127.0.0.1\nsearch corp.test\noptions ndots:1\n")
	dnsAddr, nodeAddr := loopback53(t, 11), loopback53(t, 21)
	nodeIP, _, _ := net.SplitHostPort(nodeAddr)
	metrics := net.JoinHostPort(nodeIP, strconv.Itoa(testkit.FreeUDPTCPPort(t, "127.0.0.1")))
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil,
		"--dns-listen", dnsAddr, "--nodecache-listen", nodeAddr, "--nodecache-metrics", metrics,
		"--upstream", up.Addr, "--upstream-resolv-conf", hostConf)
	ns := newNamespace(t, u.Kubeconfig)
	mustKubectl(t, u.Kubeconfig, "", "create", "service", "clusterip", "svc1", "-n", ns, "--tcp=80:80")
	ip := mustKubectl(t, u.Kubeconfig, "", "get", "service", "svc1", "-n", ns, "-o", "jsonpath={.spec.clusterIP}")
	return &agentCluster{upServer: u, Metrics: metrics, Namespace: ns, ServiceIP: ip}
}

// podManifest is a pod of policy on up's node; extra is more spec YAML.
func podManifest(name, policy, extra string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  nodeName: %s
  dnsPolicy: %s
  containers:
  - name: app
    image: example
%s`, name, upNode, policy, extra)
}

// customParams is a Custom pod's search list: the ClusterFirst list, by
// substitution.
const customParams = `  dnsParams:
    custom:
      search: ["$(NAMESPACE).svc.$(CLUSTER)", "svc.$(CLUSTER)", "$(CLUSTER)", "$(HOST)"]
      options: ["ndots:5"]
`

// createPods creates one pod per policy and waits until each is Ready.
func (c *agentCluster) createPods(t *testing.T) map[string]string {
	t.Helper()
	pods := map[string]string{ // name → policy
		"cf":     "ClusterFirst",
		"custom": "Custom",
		"ap":     "ClusterFirstWithAutopath",
	}
	for name, policy := range pods {
		extra := ""
		if policy == "Custom" {
			extra = customParams
		}
		mustKubectl(t, c.Kubeconfig, podManifest(name, policy, extra), "apply", "-n", c.Namespace, "-f", "-")
	}
	for name := range pods {
		mustKubectl(t, c.Kubeconfig, "", "wait", "-n", c.Namespace, "--for=condition=Ready", "--timeout=60s", "pod/"+name)
	}
	return pods
}

// execInPod runs `dnsplane exec` for a pod of c and returns its stdout,
// stderr and exit code.
func (c *agentCluster) execInPod(t *testing.T, pod string, argv ...string) (string, string, int) {
	t.Helper()
	return runDnsplane(t, append([]string{"exec", "--data-dir", c.DataDir, "-n", c.Namespace, pod, "--"}, argv...)...)
}

// nodeCacheRequests is the node cache's coredns_dns_requests_total, all
// labels summed.
func (c *agentCluster) nodeCacheRequests(t *testing.T) int {
	t.Helper()
	resp, err := http.Get("http://" + c.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "coredns_dns_requests_total{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		total += v
	}
	return int(total)
}

// settledRequests polls the node cache's request count until it is at
// least before+atLeast and the same on two polls in a row, and returns it.
func (c *agentCluster) settledRequests(t *testing.T, before, atLeast int) int {
	t.Helper()
	last := -1
	err := wait.PollUntilContextTimeout(t.Context(), 25*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		n := c.nodeCacheRequests(t)
		settled := n == last && n >= before+atLeast
		last = n
		return settled, nil
	})
	if err != nil {
		t.Logf("node cache request count still moving or below %d after 5s: %d", before+atLeast, last)
	}
	return last
}

// lookup is one resolver run: the addresses it printed (sorted, unique)
// and whether it found the name.
type lookup struct {
	addrs []string
	found bool
}

// resolve runs resolver ("glibc" or "musl") for name in pod.
func (c *agentCluster) resolve(t *testing.T, resolver, musl, pod, name string) lookup {
	t.Helper()
	var argv []string
	if resolver == "glibc" {
		argv = []string{"getent", "ahosts", name}
	} else {
		argv = []string{musl, name}
	}
	out, errOut, code := c.execInPod(t, pod, argv...)
	switch code {
	case 0:
	case 2: // both getent and gai: not found
		return lookup{}
	default:
		t.Fatalf("%s in %s: %s %s: exit %d\n%s%s", resolver, pod, argv[0], name, code, out, errOut)
	}
	var addrs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !slices.Contains(addrs, f[0]) {
			addrs = append(addrs, f[0])
		}
	}
	slices.Sort(addrs)
	return lookup{addrs: addrs, found: true}
}

// TestPodResolvers is issue 13's user path: pods of ClusterFirst, Custom
// and ClusterFirstWithAutopath get their resolv.conf from up's agent, and
// glibc and musl resolve through it, run by `dnsplane exec`: a Service by
// short name and by svc.ns, an external name, a name from the host search
// list and a name that does not exist. The answers agree across policies
// and libraries, and the queries reaching the node cache per lookup are
// counted: autopath costs one per record type for names that exist.
func TestPodResolvers(t *testing.T) {
	c := startAgentCluster(t)
	musl := buildGai(t, "musl-gcc")
	pods := c.createPods(t)

	// What each pod sees as /etc/resolv.conf is what the agent wrote.
	wantConf := map[string]string{
		"cf": fmt.Sprintf("search %s.svc.cluster.local svc.cluster.local cluster.local corp.test\nnameserver %s\nnameserver %s\noptions ndots:5\n",
			c.Namespace, hostOf(c.NodeCache), hostOf(c.ClusterDNS)),
		"ap": fmt.Sprintf("search search.%s.cluster.local.ap.k8s.io\nnameserver %s\nnameserver %s\noptions ndots:5\n",
			c.Namespace, hostOf(c.NodeCache), hostOf(c.ClusterDNS)),
	}
	wantConf["custom"] = wantConf["cf"]
	for pod, want := range wantConf {
		out, errOut, code := c.execInPod(t, pod, "cat", "/etc/resolv.conf")
		if code != 0 || out != want {
			t.Errorf("%s: /etc/resolv.conf (exit %d, %s):\n%s\nwant:\n%s", pod, code, errOut, out, want)
		}
	}

	names := []struct {
		name string
		want []string // nil: not found
	}{
		{"svc1", []string{c.ServiceIP}},
		{"svc1." + c.Namespace, []string{c.ServiceIP}},
		{"www.example.test", []string{"192.0.2.10"}},
		{"intranet", []string{"192.0.2.20"}},
		{"nosuch", nil},
	}
	type key struct{ resolver, policy, name string }
	counts := map[key]int{}
	for _, resolver := range []string{"glibc", "musl"} {
		for pod, policy := range pods {
			for _, n := range names {
				before := c.nodeCacheRequests(t)
				got := c.resolve(t, resolver, musl, pod, n.name)
				// The node cache counts a query after it has written the
				// answer, so the resolver can exit before the count of its
				// last query: wait until the count holds still (every
				// lookup costs at least A and AAAA).
				counts[key{resolver, policy, n.name}] = c.settledRequests(t, before, 2) - before
				if !slices.Equal(got.addrs, n.want) {
					t.Errorf("%s, %s pod: %s = %v, want %v", resolver, policy, n.name, got.addrs, n.want)
				}
			}
		}
	}
	for _, resolver := range []string{"glibc", "musl"} {
		for _, n := range names {
			line := fmt.Sprintf("%-6s %-24s", resolver, n.name)
			for _, policy := range []string{"ClusterFirst", "Custom", "ClusterFirstWithAutopath"} {
				line += fmt.Sprintf(" %s=%d", policy, counts[key{resolver, policy, n.name}])
			}
			t.Log("queries at the node cache: " + line)
			// Autopath: one query per record type (A, AAAA) for a name
			// that exists, whatever the search list would have cost.
			if n.want != nil {
				if got := counts[key{resolver, "ClusterFirstWithAutopath", n.name}]; got != 2 {
					t.Errorf("%s, autopath pod: %s cost %d queries at the node cache, want 2 (A and AAAA)", resolver, n.name, got)
				}
			}
		}
	}
	// ClusterFirst walks the search list: an external name costs a query
	// pair per search entry before the name itself.
	if got := counts[key{"glibc", "ClusterFirst", "www.example.test"}]; got < 10 {
		t.Errorf("glibc, ClusterFirst pod: www.example.test cost %d queries, want at least 10 (4 search entries and the name, A and AAAA)", got)
	}

	// kubectl exec reaches the same view through the API server and the
	// agent.
	out := mustKubectl(t, c.Kubeconfig, "", "exec", "-n", c.Namespace, "ap", "--", "cat", "/etc/resolv.conf")
	if out != wantConf["ap"] {
		t.Errorf("kubectl exec ap -- cat /etc/resolv.conf:\n%s\nwant:\n%s", out, wantConf["ap"])
	}
}

// hostOf is the address part of ADDR:PORT.
func hostOf(addrPort string) string {
	h, _, err := net.SplitHostPort(addrPort)
	if err != nil {
		return addrPort
	}
	return h
}

// TestAutopathWithoutNodeCache is the autopath KEP's first risk: the node
// cache is down. A second agent lists a dead node cache first and the
// cluster DNS second in --cluster-dns, as a node with NodeLocal DNSCache
// does; an autopath pod on it still resolves cluster names, through the
// cluster DNS's search list derived from the query name (no EDNS0 option
// without the cache). The log has what the failover cost glibc, for a
// node cache that refuses (no process: ICMP port unreachable) and one that
// is silent (a process that never answers: glibc's 5 s timeout); the
// numbers are in docs/autopath.md, with musl beside glibc.
func TestAutopathWithoutNodeCache(t *testing.T) {
	c := startAgentCluster(t)
	silent := loopback53(t, 31)
	pc, err := net.ListenPacket("udp", silent)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for _, tc := range []struct{ node, deadCache string }{
		{"refusing-cache", loopback53(t, 41)},
		{"silent-cache", silent},
	} {
		t.Run(tc.node, func(t *testing.T) {
			stateDir := t.TempDir()
			agent, err := startProcess("dnsplane agent", dnsplaneBin, "agent", "--kubeconfig", c.Kubeconfig,
				"--node-name", tc.node, "--cluster-dns", hostOf(tc.deadCache)+","+hostOf(c.ClusterDNS),
				"--cluster-domain", "cluster.local", "--resolv-conf", "", "--pod-cidr", "10.244.200.0/24",
				"--state-dir", stateDir)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = agent.stop() }()
			manifest := strings.Replace(podManifest("ap-"+tc.node, "ClusterFirstWithAutopath", ""), "nodeName: "+upNode, "nodeName: "+tc.node, 1)
			mustKubectl(t, c.Kubeconfig, manifest, "apply", "-n", c.Namespace, "-f", "-")
			mustKubectl(t, c.Kubeconfig, "", "wait", "-n", c.Namespace, "--for=condition=Ready", "--timeout=60s", "pod/ap-"+tc.node)
			for _, name := range []string{"svc1", "svc1." + c.Namespace, "kubernetes.default"} {
				start := time.Now()
				cmd := exec.CommandContext(ctxFor(t, 60*time.Second), dnsplaneBin, "exec", "--kubeconfig", c.Kubeconfig,
					"--state-dir", stateDir, "-n", c.Namespace, "ap-"+tc.node, "--", "getent", "ahosts", name)
				out, err := cmd.CombinedOutput()
				took := time.Since(start)
				if err != nil {
					t.Fatalf("getent ahosts %s with the node cache down: %v\n%s\nagent log:\n%s", name, err, out, agent.stderr.tail())
				}
				want := c.ServiceIP
				if name == "kubernetes.default" {
					want = "10.96.0.1"
				}
				if !strings.HasPrefix(string(out), want+" ") {
					t.Errorf("getent ahosts %s = %q, want %s", name, out, want)
				}
				t.Logf("node cache %s: glibc lookup of %s through the cluster DNS took %v", tc.node, name, took.Round(time.Millisecond))
			}
			// musl asks both nameservers at once: the dead cache costs it
			// nothing while the cluster DNS answers.
			if musl := buildGaiIfPresent(t); musl != "" {
				start := time.Now()
				out, err := exec.CommandContext(ctxFor(t, 60*time.Second), dnsplaneBin, "exec", "--kubeconfig", c.Kubeconfig,
					"--state-dir", stateDir, "-n", c.Namespace, "ap-"+tc.node, "--", musl, "svc1").CombinedOutput()
				took := time.Since(start)
				if err != nil || strings.TrimSpace(string(out)) != c.ServiceIP {
					t.Errorf("musl gai svc1 with the node cache down: %q, %v; want %s", out, err, c.ServiceIP)
				}
				t.Logf("node cache %s: musl lookup of svc1 through the cluster DNS took %v (dnsplane exec's start included)", tc.node, took.Round(time.Millisecond))
			}
		})
	}
}

// TestAgentWalkthrough runs docs/agent.md's "Try it" as written, on test
// addresses: the examples' pods on up's node, their files through
// `dnsplane exec … cat`, a Service through glibc and musl, and kubectl
// exec through the API server.
func TestAgentWalkthrough(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	musl := buildGai(t, "musl-gcc")
	up := startZoneServer(t, nil, 0)
	hostConf := writeFile(t, "host-resolv.conf", "nameserver 127.0.0.1\nsearch corp.example\n")
	dnsAddr, nodeAddr := loopback53(t, 12), loopback53(t, 22)
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil,
		"--dns-listen", dnsAddr, "--nodecache-listen", nodeAddr, "--upstream", up.Addr, "--upstream-resolv-conf", hostConf)
	k := u.Kubeconfig
	if got := rowFor(mustKubectl(t, k, "", "get", "nodes"), upNode); len(got) < 2 || got[1] != "Ready" {
		t.Fatalf("kubectl get nodes: %v, want %s Ready", got, upNode)
	}
	mustKubectl(t, k, "", "create", "namespace", "ns1")
	mustKubectl(t, k, "", "create", "service", "clusterip", "svc1", "-n", "ns1", "--tcp=80:80")
	ip := mustKubectl(t, k, "", "get", "service", "svc1", "-n", "ns1", "-o", "jsonpath={.spec.clusterIP}")
	mustKubectl(t, k, "", "apply", "-n", "ns1", "-f", "../../examples/custom-pod.yaml", "-f", "../../examples/autopath-pod.yaml")
	mustKubectl(t, k, "", "wait", "-n", "ns1", "--for=condition=Ready", "--timeout=60s", "pod/custom-pod", "pod/autopath-pod")

	c := &agentCluster{upServer: u, Namespace: "ns1", ServiceIP: ip}
	servers := fmt.Sprintf("nameserver %s\nnameserver %s\n", hostOf(nodeAddr), hostOf(dnsAddr))
	for pod, want := range map[string]string{
		"custom-pod":   "search ns1.svc.cluster.local my.dns.search.suffix corp.example\n" + servers + "options ndots:2\n",
		"autopath-pod": "search search.ns1.cluster.local.ap.k8s.io\n" + servers + "options ndots:5\n",
	} {
		if out, errOut, code := c.execInPod(t, pod, "cat", "/etc/resolv.conf"); code != 0 || out != want {
			t.Errorf("dnsplane exec -n ns1 %s -- cat /etc/resolv.conf (exit %d, %s):\n%s\nwant:\n%s", pod, code, errOut, out, want)
		}
	}
	for _, resolver := range []string{"glibc", "musl"} {
		if got := c.resolve(t, resolver, musl, "autopath-pod", "svc1"); !slices.Equal(got.addrs, []string{ip}) {
			t.Errorf("%s in autopath-pod: svc1 = %v, want %s", resolver, got.addrs, ip)
		}
	}
	if out := mustKubectl(t, k, "", "exec", "-n", "ns1", "autopath-pod", "--", "getent", "hosts", "svc1.ns1"); !strings.HasPrefix(out, ip+" ") {
		t.Errorf("kubectl exec … getent hosts svc1.ns1 = %q, want %s first", out, ip)
	}
}
