package coredns

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	endpointcontroller "k8s.io/kubernetes/pkg/controller/endpoint"
	endpointslicecontroller "k8s.io/kubernetes/pkg/controller/endpointslice"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/corefile"
)

// startWorkloadControllers runs, against the API server of cfg, the
// upstream controllers that turn Pods and Services into what the cluster
// DNS serves: the EndpointSlice controller (what the kubernetes plugin
// reads), the Endpoints controller, and the StatefulSet controller (pod
// names, hostname and subdomain), each built as kube-controller-manager's
// new<Name>Controller builds it, with its default worker count and no
// update batching. A controller the control plane already runs
// (controllers.Descriptors, issue 20) is not started twice: two
// EndpointSlice controllers would each write slices for the same Service.
// They stop, and are waited for, when the test ends.
func startWorkloadControllers(t testing.TB, cfg *rest.Config) {
	t.Helper()
	running := map[string]bool{}
	for _, d := range controllers.Descriptors() {
		running[d.Name] = true
	}
	// Their klog output (events, "Starting ...") is not the test's.
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.FromSlogHandler(slog.DiscardHandler)))
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 300
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("controllers' client: %v", err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	var runs []func(context.Context)
	if !running[names.EndpointSliceController] {
		esc := endpointslicecontroller.NewController(ctx, factory.Core().V1().Pods(), factory.Core().V1().Services(),
			factory.Core().V1().Nodes(), factory.Discovery().V1().EndpointSlices(), 100, client, 0)
		runs = append(runs, func(ctx context.Context) { esc.Run(ctx, 5) })
	}
	if !running[names.EndpointsController] {
		ec := endpointcontroller.NewEndpointController(ctx, factory.Core().V1().Pods(), factory.Core().V1().Services(),
			factory.Core().V1().Endpoints(), client, 0)
		runs = append(runs, func(ctx context.Context) { ec.Run(ctx, 5) })
	}
	if !running[names.StatefulSetController] {
		ssc := statefulset.NewStatefulSetController(ctx, factory.Core().V1().Pods(), factory.Apps().V1().StatefulSets(),
			factory.Core().V1().PersistentVolumeClaims(), factory.Apps().V1().ControllerRevisions(), client)
		runs = append(runs, func(ctx context.Context) { ssc.Run(ctx, 5) })
	}
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Go(func() { run(ctx) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
	})
}

// expect is the reply a query must get from both servers.
type expect struct {
	rcode int // dns.RcodeSuccess or dns.RcodeNameError
	// rdata is the answer section by rdataOf, in any order; none with
	// RcodeSuccess is NODATA.
	rdata []string
}

func wantRRs(rdata ...string) expect { return expect{rcode: dns.RcodeSuccess, rdata: rdata} }

var wantNXDOMAIN = expect{rcode: dns.RcodeNameError}

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
func checkExpect(m *dns.Msg, e expect) string {
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

// pod is one Pod the test creates on its node and makes Running.
type pod struct {
	name, ip            string
	labels              map[string]string
	hostname, subdomain string
	ready               bool
}

// TestStockCoreDNSInteropWorkloads: with EndpointSlices written by
// upstream's EndpointSlice controller from real Pods (and a StatefulSet's
// pods made by upstream's StatefulSet controller), the stock CoreDNS
// binary and `dnsplane dns` give the same, expected answers for Services
// with selectors, headless Services (ready pods' addresses, SRV per named
// port, hostname.subdomain names, publishNotReadyAddresses), StatefulSet
// pod names and pod records (pods insecure and pods verified): issue 20,
// item 4, at the cluster DNS. No agent runs: the test writes the pods'
// status as a kubelet would.
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
	cs := ts.Client
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

	pods := []pod{
		{name: "front-1", ip: "10.244.1.11", labels: map[string]string{"app": "front"}, ready: true},
		{name: "front-2", ip: "10.244.1.12", labels: map[string]string{"app": "front"}, ready: true},
		{name: "front-3", ip: "10.244.1.13", labels: map[string]string{"app": "front"}},
		{name: "db-a", ip: "10.244.1.31", labels: map[string]string{"app": "db"}, hostname: "alpha", subdomain: "db", ready: true},
		{name: "db-b", ip: "10.244.1.32", labels: map[string]string{"app": "db"}, hostname: "beta", subdomain: "db", ready: true},
		{name: "db-c", ip: "10.244.1.33", labels: map[string]string{"app": "db"}, hostname: "gamma", subdomain: "db"},
	}
	for _, p := range pods {
		created, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: p.labels},
			Spec: corev1.PodSpec{NodeName: node, Hostname: p.hostname, Subdomain: p.subdomain,
				Containers: []corev1.Container{{Name: "c", Image: "c"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating pod %s: %v", p.name, err)
		}
		setRunning(t, ctx, cs, created, p.ip, p.ready)
	}
	statefulIPs := map[string]string{"web-0": "10.244.1.21", "web-1": "10.244.1.22"}
	for name, ip := range statefulIPs {
		var p *corev1.Pod
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			p, err = cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err == nil, nil
		}); err != nil {
			t.Fatalf("the StatefulSet controller did not create pod %s: %v", name, err)
		}
		if p.Spec.Hostname != name || p.Spec.Subdomain != "web" {
			t.Errorf("pod %s: hostname %q, subdomain %q; the StatefulSet controller sets %q and %q", name, p.Spec.Hostname, p.Spec.Subdomain, name, "web")
		}
		// No scheduler: bind it as one would.
		if err := cs.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("binding %s to %s: %v", name, node, err)
		}
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setRunning(t, ctx, cs, p, ip, true)
	}

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

	// The kubernetes block of the cluster DNS Corefile (internal/corefile
	// renders `pods insecure`), and a second zone with `pods verified`,
	// where only a pod's own IP in its own namespace resolves.
	sameCorefile := func(port int) string {
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
`, port, ts.Kubeconfig)
	}
	servers := startInteropPair(t, ctx, coredns, sameCorefile)

	// And the whole Corefile `dnsplane dns` runs in `up`, with
	// searchexpand, loopguard, warmstack and cache around the kubernetes
	// plugin: it must give the same records. Its upstream is a port
	// nothing serves; no case leaves the cluster domain.
	clusterText, err := corefile.ClusterDNS(corefile.ClusterDNSOptions{
		Listen:     fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		Kubeconfig: ts.Kubeconfig,
		Upstreams:  []string{fmt.Sprintf("127.0.0.1:%d", freePort(t))},
	})
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := Start(ctx, clusterText, nil)
	if err != nil {
		t.Fatalf("starting the cluster DNS: %v\n%s", err, clusterText)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster DNS: %v", err)
		}
	})

	// Everything was written before the servers started: once they serve
	// web's two pods (and a verified pod record), they have synced. The
	// cluster DNS is asked a name no case asks, so that no case's answer
	// comes from its cache.
	servers.waitForAnswers(t, ctx, "web."+ns+".svc.cluster.local.", dns.TypeA, 2)
	servers.waitForAnswers(t, ctx, "10-244-1-21."+ns+".pod.verified.test.", dns.TypeA, 1)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		r, err := exchangeOnce("udp", cluster.UDPAddr(), "web-1.web."+ns+".svc.cluster.local.", dns.TypeAAAA)
		return err == nil && r.Rcode == dns.RcodeSuccess && len(r.Ns) > 0, nil
	}); err != nil {
		t.Fatalf("the cluster DNS did not serve web-1.web: %v", err)
	}
	t.Logf("the servers synced at %v", time.Since(start).Round(time.Millisecond))

	svc := func(name string) string { return name + "." + ns + ".svc.cluster.local." }
	rev := func(ip string) string {
		name, err := dns.ReverseAddr(ip)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	cases := []struct {
		name  string
		qtype uint16
		want  expect
	}{
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
	}
	for _, c := range cases {
		t.Run(dns.TypeToString[c.qtype]+" "+c.name, func(t *testing.T) {
			stock, ours := servers.exchangeBoth(t, "udp", c.name, c.qtype)
			if stock == nil {
				return
			}
			// Checked on both, so that two servers that agree on a wrong
			// answer cannot pass.
			if d := checkExpect(stock, c.want); d != "" {
				t.Errorf("stock CoreDNS: %s", d)
			}
			if d := checkExpect(ours, c.want); d != "" {
				t.Errorf("dnsplane dns: %s", d)
			}
			if strings.HasSuffix(c.name, ".verified.test.") {
				return // not a zone of the cluster DNS
			}
			full, err := exchangeOnce("udp", cluster.UDPAddr(), c.name, c.qtype)
			if err != nil {
				t.Fatalf("the cluster DNS: %v", err)
			}
			// Its cache may count a TTL down by the time of the query.
			for _, d := range compareReplies(withoutTTLs(stock), withoutTTLs(full)) {
				t.Errorf("stock CoreDNS and dnsplane's cluster DNS Corefile differ: %s", d)
			}
			if d := checkExpect(full, c.want); d != "" {
				t.Errorf("dnsplane's cluster DNS Corefile: %s", d)
			}
		})
	}
	servers.stock.checkRunning(t)
	t.Logf("done at %v", time.Since(start).Round(time.Millisecond))
}

// setRunning writes p's status as a kubelet does once its containers run:
// phase Running, the pod's IP, and the Ready condition ready says.
func setRunning(t testing.TB, ctx context.Context, cs kubernetes.Interface, p *corev1.Pod, ip string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	now := metav1.Now()
	p = p.DeepCopy()
	p.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		HostIP:    "192.0.2.10",
		HostIPs:   []corev1.HostIP{{IP: "192.0.2.10"}},
		StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: status, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: status, LastTransitionTime: now},
		},
	}
	if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of pod %s: %v", p.Name, err)
	}
}

// endpointDesc describes an endpoint as "IP ready|not-ready [hostname]".
func endpointDesc(ip string, ready bool, hostname string) string {
	s := ip + " not-ready"
	if ready {
		s = ip + " ready"
	}
	if hostname != "" {
		s += " " + hostname
	}
	return s
}

// waitForSlices polls until the EndpointSlices of Service svc hold
// exactly the endpoints want describes (endpointDesc).
func waitForSlices(t testing.TB, ctx context.Context, cs kubernetes.Interface, ns, svc string, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	sel := labels.Set{discoveryv1.LabelServiceName: svc}.String()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, nil
		}
		got = got[:0]
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				for _, a := range e.Addresses {
					got = append(got, endpointDesc(a, ptr.Deref(e.Conditions.Ready, false), ptr.Deref(e.Hostname, "")))
				}
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("EndpointSlices of %s/%s: got %q, want %q (%v)", ns, svc, got, want, err)
	}
}

// waitForEndpoints polls until the Endpoints of Service svc hold exactly
// the addresses want describes.
func waitForEndpoints(t testing.TB, ctx context.Context, cs kubernetes.Interface, ns, svc string, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, svc, metav1.GetOptions{}) //nolint:staticcheck // the Endpoints controller's output, deprecated in v1.33 but still written
		if err != nil {
			return false, nil
		}
		got = got[:0]
		for _, s := range ep.Subsets {
			for _, a := range s.Addresses {
				got = append(got, endpointDesc(a.IP, true, a.Hostname))
			}
			for _, a := range s.NotReadyAddresses {
				got = append(got, endpointDesc(a.IP, false, a.Hostname))
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("Endpoints of %s/%s: got %q, want %q (%v)", ns, svc, got, want, err)
	}
}
