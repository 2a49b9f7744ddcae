package coredns

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// wantReply is the reply a query must get from every server.
type wantReply struct {
	rcode int // dns.RcodeSuccess or dns.RcodeNameError
	// rdata is the answer section by rdataOf, in any order; none with
	// RcodeSuccess is NODATA.
	rdata []string
}

func wantRRs(rdata ...string) wantReply { return wantReply{rcode: dns.RcodeSuccess, rdata: rdata} }

var wantNXDOMAIN = wantReply{rcode: dns.RcodeNameError}

// rdataOf is what an answer says, without owner, class and TTL: an
// address, "port target" for SRV, the target of a PTR or CNAME.
func rdataOf(rr dns.RR) string {
	switch rr := rr.(type) {
	case *dns.A:
		return rr.A.String()
	case *dns.AAAA:
		return rr.AAAA.String()
	case *dns.SRV:
		return fmt.Sprintf("%d %s", rr.Port, strings.ToLower(rr.Target))
	case *dns.PTR:
		return strings.ToLower(rr.Ptr)
	case *dns.CNAME:
		return strings.ToLower(rr.Target)
	}
	return rr.String()
}

// checkExpect returns how reply m differs from e.
func checkExpect(m *dns.Msg, e wantReply) string {
	got := make([]string, 0, len(m.Answer))
	for _, rr := range m.Answer {
		got = append(got, rdataOf(rr))
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(e.rdata))
	if m.Rcode != e.rcode || !slices.Equal(got, want) {
		return fmt.Sprintf("got %s %q, want %s %q", dns.RcodeToString[m.Rcode], got, dns.RcodeToString[e.rcode], want)
	}
	if len(m.Answer) == 0 && (len(m.Ns) == 0 || m.Ns[0].Header().Rrtype != dns.TypeSOA) {
		return "no answer and no SOA in the authority section"
	}
	return ""
}

// withoutTTLs is a copy of m with every TTL zero.
func withoutTTLs(m *dns.Msg) *dns.Msg {
	m = m.Copy()
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			if rr.Header().Rrtype != dns.TypeOPT { // its TTL field holds flags
				rr.Header().Ttl = 0
			}
		}
	}
	return m
}

// interopQuery is a question and the reply every server must give it.
type interopQuery struct {
	name  string
	qtype uint16
	want  wantReply
}

// TestStockCoreDNSInteropWorkloads: with EndpointSlices written by
// upstream's EndpointSlice controller from real Pods (and a StatefulSet's
// pods made by upstream's StatefulSet controller), the stock CoreDNS
// binary and `dnsplane dns` (on the same Corefile, and on the cluster DNS
// Corefile it renders) give the same, expected answers for Services with
// selectors, headless Services (ready pods' addresses, SRV per named
// port, hostname.subdomain names, publishNotReadyAddresses), StatefulSet
// pod names and pod records (pods insecure and pods verified), first from
// their informers' initial list, then after changes their watches bring:
// issue 20, item 4, at the cluster DNS. No agent runs: the test writes
// the pods' status as a kubelet would.
func TestStockCoreDNSInteropWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server, upstream controllers, the stock CoreDNS binary and CoreDNS in-process")
	}
	coredns, version := stockCoreDNS(t)
	t.Logf("stock CoreDNS: %s (%s)", coredns, version)
	start := time.Now()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	// A client without the deprecation warning each read of v1 Endpoints
	// draws (waitForEndpoints).
	quiet := rest.CopyConfig(ts.ClientConfig)
	quiet.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(quiet)
	if err != nil {
		t.Fatal(err)
	}
	startWorkloadControllers(t, ts.ClientConfig)
	t.Logf("API server and controllers started at %v", time.Since(start).Round(time.Millisecond))

	const ns, node = "wl", "node-a"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", node, err)
	}

	// Services. front's pods are a Deployment's in shape (no hostname);
	// front-hl and front-all select them headless, front-all publishing
	// not-ready addresses; db's pods name themselves with hostname and
	// subdomain; web is the StatefulSet's governing Service.
	http := corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}
	syslog := corev1.ServicePort{Name: "syslog", Port: 514, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(5514)}
	pg := corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(5432)}
	services := []corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "front"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "front"}, Ports: []corev1.ServicePort{http}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "front-hl"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "front"}, Ports: []corev1.ServicePort{http, syslog}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "front-all"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "front"}, Ports: []corev1.ServicePort{http}, PublishNotReadyAddresses: true}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{pg}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{http}}},
	}
	clusterIP := map[string]string{}
	for i := range services {
		svc, err := cs.CoreV1().Services(ns).Create(ctx, &services[i], metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating service %s: %v", services[i].Name, err)
		}
		clusterIP[svc.Name] = svc.Spec.ClusterIP
	}

	// The StatefulSet: its controller creates web-0 and web-1 (Parallel:
	// without waiting for web-0 to be Ready) with hostname web-N and
	// subdomain web.
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](2),
			ServiceName:         "web",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web"}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating StatefulSet web: %v", err)
	}

	pods := []interopPod{
		{name: "front-1", ip: "10.244.1.11", labels: map[string]string{"app": "front"}, ready: true},
		{name: "front-2", ip: "10.244.1.12", labels: map[string]string{"app": "front"}, ready: true},
		{name: "front-3", ip: "10.244.1.13", labels: map[string]string{"app": "front"}},
		{name: "db-a", ip: "10.244.1.31", labels: map[string]string{"app": "db"}, hostname: "alpha", subdomain: "db", ready: true},
		{name: "db-b", ip: "10.244.1.32", labels: map[string]string{"app": "db"}, hostname: "beta", subdomain: "db", ready: true},
		{name: "db-c", ip: "10.244.1.33", labels: map[string]string{"app": "db"}, hostname: "gamma", subdomain: "db"},
	}
	for _, p := range pods {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: p.labels},
			Spec: corev1.PodSpec{NodeName: node, Hostname: p.hostname, Subdomain: p.subdomain,
				Containers: []corev1.Container{{Name: "c", Image: "c"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating pod %s: %v", p.name, err)
		}
		setRunning(t, ctx, cs, ns, p.name, p.ip, p.ready)
	}
	runStatefulPod(t, ctx, cs, ns, node, "web-0", "10.244.1.21")
	runStatefulPod(t, ctx, cs, ns, node, "web-1", "10.244.1.22")

	// The controllers' output, through the API: each Service's
	// EndpointSlices hold its pods' addresses, ready or not as the pods
	// are (and all ready under publishNotReadyAddresses), and the
	// Endpoints controller agrees.
	for svc, want := range map[string][]string{
		"front":     {"10.244.1.11 ready", "10.244.1.12 ready", "10.244.1.13 not-ready"},
		"front-hl":  {"10.244.1.11 ready", "10.244.1.12 ready", "10.244.1.13 not-ready"},
		"front-all": {"10.244.1.11 ready", "10.244.1.12 ready", "10.244.1.13 ready"},
		"db":        {"10.244.1.31 ready alpha", "10.244.1.32 ready beta", "10.244.1.33 not-ready gamma"},
		"web":       {"10.244.1.21 ready web-0", "10.244.1.22 ready web-1"},
	} {
		waitForSlices(t, ctx, cs, ns, svc, want)
		waitForEndpoints(t, ctx, cs, ns, svc, want)
	}
	t.Logf("the controllers' EndpointSlices and Endpoints complete at %v", time.Since(start).Round(time.Millisecond))

	servers := startWorkloadServers(t, ctx, coredns, ts.Kubeconfig)
	// Everything was written before the servers started: once they all
	// serve web's two pods and a verified pod record, they have synced.
	servers.waitFor(t, ctx, interopQuery{"web." + ns + ".svc.cluster.local.", dns.TypeA, wantRRs("10.244.1.21", "10.244.1.22")})
	servers.waitFor(t, ctx, interopQuery{"10-244-1-21." + ns + ".pod.verified.test.", dns.TypeA, wantRRs("10.244.1.21")})
	t.Logf("the servers synced at %v", time.Since(start).Round(time.Millisecond))

	svc := func(name string) string { return name + "." + ns + ".svc.cluster.local." }
	rev := func(ip string) string {
		name, err := dns.ReverseAddr(ip)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	servers.check(t, []interopQuery{
		// A Service with a selector: its cluster IP; SRV names the Service.
		{svc("front"), dns.TypeA, wantRRs(clusterIP["front"])},
		{"_http._tcp." + svc("front"), dns.TypeSRV, wantRRs("80 " + svc("front"))},
		// Headless: the ready pods only; SRV per named port with the
		// endpoints' port (the target port) and IP-dashed targets, since
		// these pods have no hostname.
		{svc("front-hl"), dns.TypeA, wantRRs("10.244.1.11", "10.244.1.12")},
		{"_http._tcp." + svc("front-hl"), dns.TypeSRV, wantRRs("8080 10-244-1-11."+svc("front-hl"), "8080 10-244-1-12."+svc("front-hl"))},
		{"_syslog._udp." + svc("front-hl"), dns.TypeSRV, wantRRs("5514 10-244-1-11."+svc("front-hl"), "5514 10-244-1-12."+svc("front-hl"))},
		{"_syslog._tcp." + svc("front-hl"), dns.TypeSRV, wantNXDOMAIN},
		{"10-244-1-11." + svc("front-hl"), dns.TypeA, wantRRs("10.244.1.11")},
		{"10-244-1-13." + svc("front-hl"), dns.TypeA, wantNXDOMAIN},
		// publishNotReadyAddresses: the not-ready pod too.
		{svc("front-all"), dns.TypeA, wantRRs("10.244.1.11", "10.244.1.12", "10.244.1.13")},
		{"10-244-1-13." + svc("front-all"), dns.TypeA, wantRRs("10.244.1.13")},
		// hostname.subdomain: the ready pods by their hostnames.
		{svc("db"), dns.TypeA, wantRRs("10.244.1.31", "10.244.1.32")},
		{"_pg._tcp." + svc("db"), dns.TypeSRV, wantRRs("5432 alpha."+svc("db"), "5432 beta."+svc("db"))},
		{"alpha." + svc("db"), dns.TypeA, wantRRs("10.244.1.31")},
		{"beta." + svc("db"), dns.TypeA, wantRRs("10.244.1.32")},
		{"gamma." + svc("db"), dns.TypeA, wantNXDOMAIN}, // not ready
		{"alpha." + svc("db"), dns.TypeAAAA, wantRRs()},
		// The StatefulSet's pods under its governing Service.
		{svc("web"), dns.TypeA, wantRRs("10.244.1.21", "10.244.1.22")},
		{"web-0." + svc("web"), dns.TypeA, wantRRs("10.244.1.21")},
		{"web-1." + svc("web"), dns.TypeA, wantRRs("10.244.1.22")},
		{"web-2." + svc("web"), dns.TypeA, wantNXDOMAIN},
		{"_http._tcp." + svc("web"), dns.TypeSRV, wantRRs("8080 web-0."+svc("web"), "8080 web-1."+svc("web"))},
		// Reverse: an endpoint's address names it under every Service
		// that has it ready. The DNS specification asks this of headless
		// Services only; the plugin answers from every EndpointSlice
		// (plugin/kubernetes/reverse.go, serviceRecordForIP), front's
		// included, and both builds agree.
		{rev("10.244.1.21"), dns.TypePTR, wantRRs("web-0." + svc("web"))},
		{rev("10.244.1.31"), dns.TypePTR, wantRRs("alpha." + svc("db"))},
		{rev("10.244.1.11"), dns.TypePTR, wantRRs("10-244-1-11."+svc("front"), "10-244-1-11."+svc("front-hl"), "10-244-1-11."+svc("front-all"))},
		{rev("10.244.1.13"), dns.TypePTR, wantRRs("10-244-1-13." + svc("front-all"))},
		// Pod records, pods insecure: any well-formed name.
		{"10-244-1-11." + ns + ".pod.cluster.local.", dns.TypeA, wantRRs("10.244.1.11")},
		{"10-9-9-9." + ns + ".pod.cluster.local.", dns.TypeA, wantRRs("10.9.9.9")},
		// pods verified: a pod with that IP in that namespace.
		{"10-244-1-11." + ns + ".pod.verified.test.", dns.TypeA, wantRRs("10.244.1.11")},
		{"10-244-1-13." + ns + ".pod.verified.test.", dns.TypeA, wantRRs("10.244.1.13")},
		{"10-244-1-22." + ns + ".pod.verified.test.", dns.TypeA, wantRRs("10.244.1.22")},
		{"10-9-9-9." + ns + ".pod.verified.test.", dns.TypeA, wantNXDOMAIN},
		{"10-244-1-11.default.pod.verified.test.", dns.TypeA, wantNXDOMAIN},
		{"front." + ns + ".svc.verified.test.", dns.TypeA, wantRRs(clusterIP["front"])},
	})

	// Then changes, as the servers' watches see them: front-3 turns
	// Ready; front-1 is deleted, and stays Terminating (no agent confirms
	// it), which takes it out of front-hl but not of front-all; the
	// StatefulSet grows to web-2.
	setRunning(t, ctx, cs, ns, "front-3", "10.244.1.13", true)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "front-1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting front-1: %v", err)
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("scaling web to 3: %v", err)
	}
	runStatefulPod(t, ctx, cs, ns, node, "web-2", "10.244.1.23")
	changed := []interopQuery{
		{svc("front-hl"), dns.TypeA, wantRRs("10.244.1.12", "10.244.1.13")},
		{svc("front-all"), dns.TypeA, wantRRs("10.244.1.11", "10.244.1.12", "10.244.1.13")},
		{"web-2." + svc("web"), dns.TypeA, wantRRs("10.244.1.23")},
	}
	for _, q := range changed {
		servers.waitFor(t, ctx, q)
	}
	t.Logf("the servers saw the changes at %v", time.Since(start).Round(time.Millisecond))
	t.Run("after changes", func(t *testing.T) {
		servers.check(t, append(changed,
			interopQuery{"10-244-1-11." + svc("front-hl"), dns.TypeA, wantNXDOMAIN},
			interopQuery{"10-244-1-13." + svc("front-hl"), dns.TypeA, wantRRs("10.244.1.13")},
			interopQuery{"_http._tcp." + svc("web"), dns.TypeSRV, wantRRs("8080 web-0."+svc("web"), "8080 web-1."+svc("web"), "8080 web-2."+svc("web"))},
			interopQuery{"10-244-1-23." + ns + ".pod.verified.test.", dns.TypeA, wantRRs("10.244.1.23")},
			// Still there: the plugin ignores the update that marks a pod
			// terminating (plugin/kubernetes/object/informer.go skips
			// errPodTerminating), so only a server started after the
			// delete leaves it out.
			interopQuery{"10-244-1-11." + ns + ".pod.verified.test.", dns.TypeA, wantRRs("10.244.1.11")},
		))
	})
	servers.pair.stock.checkRunning(t)
	t.Logf("done at %v", time.Since(start).Round(time.Millisecond))
}

// workloadServers are the servers the workload interop tests compare:
// stock CoreDNS and ours on one Corefile with the cluster DNS's kubernetes
// block (internal/corefile renders `pods insecure`) and a second zone,
// verified.test, with `pods verified`; and ours on the whole cluster DNS
// Corefile `dnsplane dns` runs in `up`, with searchexpand, loopguard,
// warmstack and cache around the kubernetes plugin.
type workloadServers struct {
	pair    interopPair
	cluster string // UDP address of the cluster DNS
}

// startWorkloadServers starts the three against the API server of
// kubeconfig; they stop when the test ends.
func startWorkloadServers(t testing.TB, ctx context.Context, coredns, kubeconfig string) workloadServers {
	t.Helper()
	pair := startInteropPair(t, ctx, coredns, func(port int) string {
		return fmt.Sprintf(`.:%[1]d {
    bind 127.0.0.1
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %[2]s dnsplane
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
}
verified.test:%[1]d {
    bind 127.0.0.1
    errors
    kubernetes verified.test {
        kubeconfig %[2]s dnsplane
        pods verified
    }
}
`, port, kubeconfig)
	})
	// The cluster DNS's upstream is a port nothing serves: no case leaves
	// the cluster domain.
	text, err := corefile.ClusterDNS(corefile.ClusterDNSOptions{
		Listen:     fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1")),
		Kubeconfig: kubeconfig,
		Upstreams:  []string{fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := Start(ctx, text, nil)
	if err != nil {
		t.Fatalf("starting the cluster DNS: %v\n%s", err, text)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster DNS: %v", err)
		}
	})
	return workloadServers{pair: pair, cluster: cluster.UDPAddr()}
}

// problems are the differences of the servers' replies to q from each
// other and from what q wants.
func (s workloadServers) problems(q interopQuery) []string {
	var out []string
	reply := func(who, addr string) *dns.Msg {
		m, err := exchangeOnce("udp", addr, q.name, q.qtype)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", who, err))
			return nil
		}
		// Checked on each, so that servers that agree on a wrong answer
		// cannot pass.
		if d := checkExpect(m, q.want); d != "" {
			out = append(out, who+": "+d)
		}
		return m
	}
	stock := reply("stock CoreDNS", s.pair.stock.addr)
	ours := reply("dnsplane dns", s.pair.ours)
	if stock != nil && ours != nil {
		for _, d := range compareReplies(stock, ours) {
			out = append(out, "stock CoreDNS and dnsplane dns differ: "+d)
		}
	}
	if strings.HasSuffix(q.name, ".verified.test.") {
		return out // not a zone of the cluster DNS
	}
	full := reply("dnsplane's cluster DNS Corefile", s.cluster)
	if stock != nil && full != nil {
		// Its cache counts TTLs down.
		for _, d := range compareReplies(withoutTTLs(stock), withoutTTLs(full)) {
			out = append(out, "stock CoreDNS and dnsplane's cluster DNS Corefile differ: "+d)
		}
	}
	return out
}

// check runs each case as a subtest of t that fails with its problems.
func (s workloadServers) check(t *testing.T, cases []interopQuery) {
	t.Helper()
	for _, q := range cases {
		t.Run(dns.TypeToString[q.qtype]+" "+q.name, func(t *testing.T) {
			for _, p := range s.problems(q) {
				t.Error(p)
			}
		})
	}
}

// waitFor polls until every server answers q as it wants: the informers
// have seen what the test wrote, and the cluster DNS's cache no longer
// holds an older answer (for at most the plugin's TTL, 5 s).
func (s workloadServers) waitFor(t testing.TB, ctx context.Context, q interopQuery) {
	t.Helper()
	var last []string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = s.problems(q)
		return len(last) == 0, nil
	}); err != nil {
		s.pair.stock.checkRunning(t)
		t.Fatalf("%s %s: the servers did not all answer %q within 30s: %q", dns.TypeToString[q.qtype], q.name, q.want.rdata, last)
	}
}

// TestStockCoreDNSInteropIPv6 is the workload test's headless Service on
// a single-stack IPv6 cluster: the EndpointSlice controller writes IPv6
// slices (the Service's family, spec.ipFamilies), and the servers answer
// AAAA with the pods' addresses, SRV with IP-dashed IPv6 targets
// (fd00-10-244--12, the plugin's form), ip6.arpa PTR and IPv6 pod records.
func TestStockCoreDNSInteropIPv6(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server, upstream controllers, the stock CoreDNS binary and CoreDNS in-process")
	}
	coredns, _ := stockCoreDNS(t)
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{ServiceClusterIPRange: "fd00:10:96::/112"})
	cs := ts.Client
	startWorkloadControllers(t, ts.ClientConfig)

	const ns, node = "six", "node-a"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", node, err)
	}
	pg := corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}
	api, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{pg}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating service api: %v", err)
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{pg}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service db: %v", err)
	}
	for _, p := range []interopPod{
		{name: "db-a", ip: "fd00:10:244::11", hostname: "alpha", subdomain: "db", ready: true},
		{name: "db-b", ip: "fd00:10:244::12", ready: true},
		{name: "db-c", ip: "fd00:10:244::13"},
	} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: map[string]string{"app": "db"}},
			Spec: corev1.PodSpec{NodeName: node, Hostname: p.hostname, Subdomain: p.subdomain,
				Containers: []corev1.Container{{Name: "c", Image: "c"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", p.name, err)
		}
		setRunning(t, ctx, cs, ns, p.name, p.ip, p.ready)
	}
	waitForSlices(t, ctx, cs, ns, "db", []string{"fd00:10:244::11 ready alpha", "fd00:10:244::12 ready", "fd00:10:244::13 not-ready"})

	servers := startWorkloadServers(t, ctx, coredns, ts.Kubeconfig)
	svc := func(name string) string { return name + "." + ns + ".svc.cluster.local." }
	servers.waitFor(t, ctx, interopQuery{svc("db"), dns.TypeAAAA, wantRRs("fd00:10:244::11", "fd00:10:244::12")})
	rev := func(ip string) string {
		name, err := dns.ReverseAddr(ip)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	servers.check(t, []interopQuery{
		{svc("api"), dns.TypeAAAA, wantRRs(api.Spec.ClusterIP)},
		{svc("api"), dns.TypeA, wantRRs()},
		{rev(api.Spec.ClusterIP), dns.TypePTR, wantRRs(svc("api"))},
		{svc("db"), dns.TypeA, wantRRs()},
		{"_pg._tcp." + svc("db"), dns.TypeSRV, wantRRs("5432 alpha."+svc("db"), "5432 fd00-10-244--12."+svc("db"))},
		{"alpha." + svc("db"), dns.TypeAAAA, wantRRs("fd00:10:244::11")},
		{"fd00-10-244--12." + svc("db"), dns.TypeAAAA, wantRRs("fd00:10:244::12")},
		{"fd00-10-244--13." + svc("db"), dns.TypeAAAA, wantNXDOMAIN},
		// The EndpointSlice controller gives the endpoint its hostname
		// only in the Service its subdomain names.
		{rev("fd00:10:244::11"), dns.TypePTR, wantRRs("alpha."+svc("db"), "fd00-10-244--11."+svc("api"))},
		{"fd00-10-244--11." + ns + ".pod.cluster.local.", dns.TypeAAAA, wantRRs("fd00:10:244::11")},
		{"fd00-10-244--13." + ns + ".pod.verified.test.", dns.TypeAAAA, wantRRs("fd00:10:244::13")},
		{"fd00-10-244--99." + ns + ".pod.verified.test.", dns.TypeAAAA, wantNXDOMAIN},
	})
	servers.pair.stock.checkRunning(t)
	t.Logf("done at %v", time.Since(start).Round(time.Millisecond))
}
