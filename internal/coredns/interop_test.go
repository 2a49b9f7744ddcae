package coredns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// stockCoreDNSVersion is the CoreDNS release dnsplane builds against
// (go.mod) and the stock binary the interop test runs.
const stockCoreDNSVersion = "1.15.0"

// stockCoreDNS returns the path of a stock CoreDNS 1.15.0 binary and the
// first line of its -version output: $DNSPLANE_COREDNS if set (a wrong
// version then fails the test), else the first of `coredns` on PATH and
// $(go env GOPATH)/bin/coredns that reports 1.15.0. It skips the test when
// there is none.
func stockCoreDNS(t *testing.T) (path, version string) {
	t.Helper()
	const install = "install it with `go install github.com/coredns/coredns@v" + stockCoreDNSVersion + "` (bash .ci/run does) or point DNSPLANE_COREDNS at one"
	versionOf := func(bin string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "-version").Output()
		if err != nil {
			return "", err
		}
		first, _, _ := strings.Cut(string(out), "\n")
		return strings.TrimSpace(first), nil
	}
	want := "CoreDNS-" + stockCoreDNSVersion

	if bin := os.Getenv("DNSPLANE_COREDNS"); bin != "" {
		v, err := versionOf(bin)
		if err != nil {
			t.Fatalf("DNSPLANE_COREDNS=%s: running -version: %v", bin, err)
		}
		if v != want {
			t.Fatalf("DNSPLANE_COREDNS=%s reports %q, want %q; %s", bin, v, want, install)
		}
		return bin, v
	}

	var candidates []string
	if bin, err := exec.LookPath("coredns"); err == nil {
		candidates = append(candidates, bin)
	}
	candidates = append(candidates, filepath.Join(goPath(), "bin", "coredns"))
	var found []string
	for _, bin := range candidates {
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		v, err := versionOf(bin)
		if err != nil {
			found = append(found, fmt.Sprintf("%s (-version: %v)", bin, err))
			continue
		}
		if v == want {
			return bin, v
		}
		found = append(found, fmt.Sprintf("%s (%s)", bin, v))
	}
	if len(found) > 0 {
		t.Skipf("no stock %s binary: found only %s; %s", want, strings.Join(found, ", "), install)
	}
	t.Skipf("no stock CoreDNS binary (not DNSPLANE_COREDNS, not on PATH, not in %s); %s", filepath.Join(goPath(), "bin"), install)
	return "", ""
}

// goPath is the first entry of `go env GOPATH`, else of $GOPATH, else ~/go.
func goPath() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gp := ""
	if out, err := exec.CommandContext(ctx, "go", "env", "GOPATH").Output(); err == nil {
		gp = strings.TrimSpace(string(out))
	}
	if gp == "" {
		gp = os.Getenv("GOPATH")
	}
	if list := filepath.SplitList(gp); len(list) > 0 && list[0] != "" {
		return list[0]
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go")
}

// normalizeRRs renders a reply section for comparison: one string per RR,
// owner names lowercased, sorted, OPT records dropped. TTLs are kept: both
// servers must agree on them. SOA serials are zeroed: the kubernetes
// plugin's serial is the Unix time at which that process's informers last
// saw a change (Kubernetes.Serial → APIConn.Modified), so two processes
// watching the same API server legitimately differ by a second or more.
func normalizeRRs(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		rr = dns.Copy(rr)
		rr.Header().Name = strings.ToLower(rr.Header().Name)
		if soa, ok := rr.(*dns.SOA); ok {
			soa.Serial = 0
		}
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// diffSection describes how two normalised sections differ, or "" if they
// are equal.
func diffSection(section string, stock, ours []string) string {
	if slices.Equal(stock, ours) {
		return ""
	}
	var onlyStock, onlyOurs []string
	for _, s := range stock {
		if !slices.Contains(ours, s) {
			onlyStock = append(onlyStock, s)
		}
	}
	for _, s := range ours {
		if !slices.Contains(stock, s) {
			onlyOurs = append(onlyOurs, s)
		}
	}
	return fmt.Sprintf("%s differs:\n  stock CoreDNS (%d RRs): %q\n  dnsplane dns  (%d RRs): %q\n  only in stock: %q\n  only in ours:  %q",
		section, len(stock), stock, len(ours), ours, onlyStock, onlyOurs)
}

// compareReplies returns the differences between the stock server's reply
// and ours: rcode, the AA bit, and the answer, authority and additional
// sections, normalised by normalizeRRs.
func compareReplies(stock, ours *dns.Msg) []string {
	var diffs []string
	if stock.Rcode != ours.Rcode {
		diffs = append(diffs, fmt.Sprintf("rcode: stock %s, ours %s", dns.RcodeToString[stock.Rcode], dns.RcodeToString[ours.Rcode]))
	}
	if stock.Authoritative != ours.Authoritative {
		diffs = append(diffs, fmt.Sprintf("AA bit: stock %t, ours %t", stock.Authoritative, ours.Authoritative))
	}
	for _, s := range []struct {
		name        string
		stock, ours []dns.RR
	}{
		{"answer", stock.Answer, ours.Answer},
		{"authority", stock.Ns, ours.Ns},
		{"additional", stock.Extra, ours.Extra},
	} {
		if d := diffSection(s.name, normalizeRRs(s.stock), normalizeRRs(s.ours)); d != "" {
			diffs = append(diffs, d)
		}
	}
	return diffs
}

// stockServer is the stock CoreDNS binary running as a child process.
type stockServer struct {
	addr string
	// exited is closed when the process has exited, with its error in
	// waitErr.
	exited  chan struct{}
	waitErr error
}

// checkRunning fails t if the stock process has exited.
func (s *stockServer) checkRunning(t testing.TB) {
	t.Helper()
	select {
	case <-s.exited:
		t.Fatalf("stock CoreDNS exited: %v", s.waitErr)
	default:
	}
}

// startStockCoreDNS runs the binary coredns on the Corefile corefile gives
// for a free port, killed when the test ends; its output is logged if the
// test failed.
func startStockCoreDNS(t testing.TB, coredns string, corefile func(port int) string) *stockServer {
	t.Helper()
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	conf := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(conf, []byte(corefile(port)), 0o600); err != nil {
		t.Fatal(err)
	}
	procCtx, procCancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(procCtx, coredns, "-conf", conf)
	cmd.Dir = filepath.Dir(conf)
	var out testkit.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		procCancel()
		t.Fatalf("starting %s: %v", coredns, err)
	}
	s := &stockServer{addr: net.JoinHostPort("127.0.0.1", fmt.Sprint(port)), exited: make(chan struct{})}
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		procCancel() // kills the process
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("stock CoreDNS (pid %d) did not exit after kill", cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("stock CoreDNS output:\n%s", out.String())
		}
	})
	return s
}

// interopPair is the stock CoreDNS binary and `dnsplane dns`'s server
// (in-process, as `dnsplane dns --conf` runs it) serving one Corefile.
type interopPair struct {
	stock *stockServer
	ours  string // UDP (and TCP) address of ours
}

// startInteropPair starts both servers on the Corefile corefile gives for
// a port; they stop when the test ends.
func startInteropPair(t testing.TB, ctx context.Context, coredns string, corefile func(port int) string) interopPair {
	t.Helper()
	stock := startStockCoreDNS(t, coredns, corefile)
	ours, err := Start(ctx, corefile(testkit.FreeUDPTCPPort(t, "127.0.0.1")), nil)
	if err != nil {
		t.Fatalf("starting dnsplane's CoreDNS: %v", err)
	}
	t.Cleanup(func() {
		if err := ours.Stop(); err != nil {
			t.Errorf("stopping ours: %v", err)
		}
	})
	if ours.UDPAddr() == "" {
		t.Fatal("dnsplane's CoreDNS has no UDP address")
	}
	return interopPair{stock: stock, ours: ours.UDPAddr()}
}

// exchangeOnce sends one query for name and qtype to addr over network.
func exchangeOnce(network, addr, name string, qtype uint16) (*dns.Msg, error) {
	c := &dns.Client{Net: network, Timeout: 2 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	r, _, err := c.Exchange(m, addr)
	return r, err
}

// waitForAnswers polls both servers until each answers name and qtype
// with NOERROR and count answers: their informers have synced what the
// test created before they started.
func (p interopPair) waitForAnswers(t testing.TB, ctx context.Context, name string, qtype uint16, count int) {
	t.Helper()
	for _, srv := range []struct{ who, addr string }{{"stock CoreDNS", p.stock.addr}, {"dnsplane dns", p.ours}} {
		var last *dns.Msg
		var lastErr error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			last, lastErr = exchangeOnce("udp", srv.addr, name, qtype)
			return lastErr == nil && last.Rcode == dns.RcodeSuccess && len(last.Answer) == count, nil
		})
		if err != nil {
			p.stock.checkRunning(t)
			t.Fatalf("%s: %s %s: no answer with %d records within 30s; last reply %v, err %v", srv.who, dns.TypeToString[qtype], name, count, last, lastErr)
		}
	}
}

// exchangeBoth sends the same query to both servers, reports every
// difference between their replies as an error of t, and returns the
// replies, or nil if either server did not answer.
func (p interopPair) exchangeBoth(t testing.TB, network, name string, qtype uint16) (stock, ours *dns.Msg) {
	t.Helper()
	q := fmt.Sprintf("%s %s over %s", dns.TypeToString[qtype], name, network)
	stock, err := exchangeOnce(network, p.stock.addr, name, qtype)
	if err != nil {
		t.Errorf("%s: stock CoreDNS: %v", q, err)
		return nil, nil
	}
	ours, err = exchangeOnce(network, p.ours, name, qtype)
	if err != nil {
		t.Errorf("%s: dnsplane dns: %v", q, err)
		return nil, nil
	}
	for _, d := range compareReplies(stock, ours) {
		t.Errorf("%s: stock CoreDNS and dnsplane dns differ: %s", q, d)
	}
	return stock, ours
}

// TestStockCoreDNSInterop runs the stock CoreDNS 1.15.0 binary and
// `dnsplane dns`'s server (CoreDNS as a library, in-process) with the same
// Corefile, both with a kubernetes block pointed at dnsplane's API server,
// and checks that they give the same replies to the service, endpoint, pod
// and reverse queries of the Kubernetes DNS specification: our API server
// serves the stock plugin's list/watch (protobuf, its own client-go) as
// well as ours, and our build of CoreDNS answers like the release.
func TestStockCoreDNSInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server, the stock CoreDNS binary and CoreDNS in-process")
	}
	coredns, version := stockCoreDNS(t)
	t.Logf("stock CoreDNS: %s (%s)", coredns, version)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, cs := startAPIServer(t, ctx)

	// Objects: in "interop", a ClusterIP service with named TCP and UDP
	// ports, a headless service with an EndpointSlice of two ready
	// endpoints with hostnames (and one not ready, which must not be
	// served), and ExternalName services pointing outside and inside the
	// cluster domain. "other" holds a same-named service so that namespace
	// scoping shows.
	const ns, other = "interop", "other"
	for _, name := range []string{ns, other} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace %s: %v", name, err)
		}
	}
	createService := func(namespace string, svc *corev1.Service) *corev1.Service {
		t.Helper()
		out, err := cs.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating service %s/%s: %v", namespace, svc.Name, err)
		}
		return out
	}
	web := createService(ns, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)},
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(5353)},
			},
		},
	})
	if ip := net.ParseIP(web.Spec.ClusterIP); ip == nil || ip.To4() == nil {
		t.Fatalf("web has no IPv4 ClusterIP: %q", web.Spec.ClusterIP)
	}
	otherWeb := createService(other, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Name: "http", Port: 8000, Protocol: corev1.ProtocolTCP}},
		},
	})
	createService(ns, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports:     []corev1.ServicePort{{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}},
		},
	})
	ready, notReady := true, false
	pgPort, pgName, tcp := int32(5432), "pg", corev1.ProtocolTCP
	hostname := func(s string) *string { return &s }
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "db-x1", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.20.0.11"}, Hostname: hostname("db-0"), Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			{Addresses: []string{"10.20.0.12"}, Hostname: hostname("db-1"), Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			{Addresses: []string{"10.20.0.13"}, Hostname: hostname("db-2"), Conditions: discoveryv1.EndpointConditions{Ready: &notReady}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: &pgName, Port: &pgPort, Protocol: &tcp}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating EndpointSlice: %v", err)
	}
	createService(ns, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
	})
	createService(ns, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "alias"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "web." + ns + ".svc.cluster.local"},
	})

	// One Corefile for both servers; only the port differs.
	corefile := func(port int) string {
		return fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %s dnsplane
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
}
`, port, kubeconfig)
	}

	servers := startInteropPair(t, ctx, coredns, corefile)
	// Both servers' informers have synced once they serve web's A record
	// and db's endpoints (all objects were created before either started).
	webName := "web." + ns + ".svc.cluster.local."
	dbName := "db." + ns + ".svc.cluster.local."
	servers.waitForAnswers(t, ctx, webName, dns.TypeA, 1)
	servers.waitForAnswers(t, ctx, dbName, dns.TypeA, 2)

	reverse := func(ip string) string {
		t.Helper()
		name, err := dns.ReverseAddr(ip)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	type want int
	const (
		answer   want = iota // NOERROR with a non-empty answer
		nodata               // NOERROR, empty answer, SOA in authority
		nxdomain             // NXDOMAIN, SOA in authority
	)
	cases := []struct {
		name  string
		qtype uint16
		want  want
	}{
		{webName, dns.TypeA, answer},
		{"WEB." + strings.ToUpper(ns) + ".svc.Cluster.Local.", dns.TypeA, answer},
		{webName, dns.TypeAAAA, nodata},
		{webName, dns.TypeTXT, nodata},
		{webName, dns.TypeSRV, answer},
		{"_http._tcp." + webName, dns.TypeSRV, answer},
		{"_dns._udp." + webName, dns.TypeSRV, answer},
		{"_http._udp." + webName, dns.TypeSRV, nxdomain},
		{"web." + other + ".svc.cluster.local.", dns.TypeA, answer},
		{dbName, dns.TypeA, answer},
		{dbName, dns.TypeSRV, answer},
		{"_pg._tcp." + dbName, dns.TypeSRV, answer},
		{"db-0." + dbName, dns.TypeA, answer},
		{"db-1." + dbName, dns.TypeA, answer},
		{"db-2." + dbName, dns.TypeA, nxdomain}, // not ready
		{"ext." + ns + ".svc.cluster.local.", dns.TypeCNAME, answer},
		// The CNAME alone: with no forward, the plugin's upstream lookup
		// of example.com. fails ("no next plugin found", logged by errors).
		{"ext." + ns + ".svc.cluster.local.", dns.TypeA, answer},
		{"alias." + ns + ".svc.cluster.local.", dns.TypeA, answer},
		{reverse(web.Spec.ClusterIP), dns.TypePTR, answer},
		{reverse(otherWeb.Spec.ClusterIP), dns.TypePTR, answer},
		{reverse("10.20.0.11"), dns.TypePTR, answer},
		{"10-0-0-1." + ns + ".pod.cluster.local.", dns.TypeA, answer},
		{"10-0-0-1." + ns + ".pod.cluster.local.", dns.TypeAAAA, nodata},
		{"nope." + ns + ".svc.cluster.local.", dns.TypeA, nxdomain},
		{"web.nonamespace.svc.cluster.local.", dns.TypeA, nxdomain},
		{ns + ".svc.cluster.local.", dns.TypeA, nodata},
		{"cluster.local.", dns.TypeSOA, answer},
		// NS is NODATA from both: the plugin names its own service's
		// addresses, found from the IPs it is bound to, and it ignores
		// loopback ones (plugin/kubernetes/local.go boundIPs).
		{"cluster.local.", dns.TypeNS, nodata},
		{"dns-version.cluster.local.", dns.TypeTXT, answer},
	}
	check := func(t *testing.T, network, name string, qtype uint16, w want) {
		t.Helper()
		q := fmt.Sprintf("%s %s over %s", dns.TypeToString[qtype], name, network)
		stock, mine := servers.exchangeBoth(t, network, name, qtype)
		if stock == nil {
			return
		}
		// The expectation is checked on both replies so that two servers
		// that agree on nothing (empty, or both failing) cannot pass.
		for _, r := range []struct {
			who string
			m   *dns.Msg
		}{{"stock CoreDNS", stock}, {"dnsplane dns", mine}} {
			hasSOA := len(r.m.Ns) > 0 && r.m.Ns[0].Header().Rrtype == dns.TypeSOA
			switch {
			case w == answer && (r.m.Rcode != dns.RcodeSuccess || len(r.m.Answer) == 0):
				t.Errorf("%s: %s: want NOERROR with answers, got %s with %d answers:\n%v", q, r.who, dns.RcodeToString[r.m.Rcode], len(r.m.Answer), r.m)
			case w == nodata && (r.m.Rcode != dns.RcodeSuccess || len(r.m.Answer) != 0 || !hasSOA):
				t.Errorf("%s: %s: want NODATA (NOERROR, no answers, SOA), got:\n%v", q, r.who, r.m)
			case w == nxdomain && (r.m.Rcode != dns.RcodeNameError || len(r.m.Answer) != 0 || !hasSOA):
				t.Errorf("%s: %s: want NXDOMAIN with SOA, got:\n%v", q, r.who, r.m)
			}
		}
		if !t.Failed() {
			t.Logf("%s: %s, %d answers, identical", q, dns.RcodeToString[stock.Rcode], len(stock.Answer))
		}
	}
	for _, c := range cases {
		t.Run(dns.TypeToString[c.qtype]+" "+c.name, func(t *testing.T) {
			check(t, "udp", c.name, c.qtype, c.want)
		})
	}
	t.Run("TCP SRV "+dbName, func(t *testing.T) {
		check(t, "tcp", dbName, dns.TypeSRV, answer)
	})

	servers.stock.checkRunning(t)
}
