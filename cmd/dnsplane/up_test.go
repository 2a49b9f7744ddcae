package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/testkit"
	"github.com/dnsplane/dnsplane/internal/upstate"
)

// notifyingBuffer signals once what was written contains a marker.
type notifyingBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func (b *notifyingBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.marker != "" && strings.Contains(b.buf.String(), b.marker) {
		b.once.Do(func() { close(b.seen) })
	}
	return n, err
}

func (b *notifyingBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startUpstream runs a resolver on 127.0.0.1 answering every A query with
// ip, standing for the node's upstream.
func startUpstream(t *testing.T, ip net.IP) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; q.Qtype == dns.TypeA {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: ip}}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = s.ActivateAndServe() }()
	t.Cleanup(func() { _ = s.Shutdown() })
	return pc.LocalAddr().String()
}

// TestUpServesAndStops runs the quick start's main command in-process: it
// must come up on the embedded etcd, write a kubeconfig, serve cluster DNS
// and a node cache that answer Service names (plain and autopath) from the
// API server and other names from upstream, print how to use it all, and
// shut down cleanly on cancellation (what SIGINT does).
func TestUpServesAndStops(t *testing.T) {
	dir := t.TempDir()
	hostConf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(hostConf, []byte("search corp.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	upstream := startUpstream(t, net.IPv4(192, 0, 2, 80))
	dnsAddr := testkit.FreeUDPTCPAddr(t)
	nodeAddr := testkit.FreeUDPTCPAddr(t)
	out := &notifyingBuffer{marker: "export KUBECONFIG=", seen: make(chan struct{})}
	var errOut bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"up", "--data-dir", dir, "--secure-port", "0", "--log-level", "warn",
			"--dns-listen", dnsAddr, "--nodecache-listen", nodeAddr, "--upstream", upstream,
			"--upstream-resolv-conf", hostConf}, strings.NewReader(""), out, &errOut)
	}()
	select {
	case <-out.seen:
	case code := <-done:
		t.Fatalf("up exited early with %d: %s%s", code, out.String(), errOut.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("up did not come up: %s%s", out.String(), errOut.String())
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Errorf("no kubeconfig: %v", err)
	}
	for _, want := range []string{"dnsplane is up\n  API server:  https://127.0.0.1:", "cluster DNS: " + dnsAddr, "node cache:  " + nodeAddr} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, out.String())
		}
	}
	// up.json is there by the banner, with the one node `up` runs.
	if st, err := upstate.Read(dir); err != nil {
		t.Errorf("up.json: %v", err)
	} else if st.PID != os.Getpid() || st.ClusterDNS != dnsAddr || st.Kubeconfig != kubeconfig || len(st.Nodes) != 1 ||
		st.Nodes[0] != (upstate.Node{Name: "dnsplane", NodeCache: nodeAddr, StateDir: filepath.Join(dir, "agent"), PodCIDR: "10.244.0.0/24"}) {
		t.Errorf("up.json: %+v", st)
	}

	// The default namespace's kubernetes Service (10.96.0.1) through the
	// node cache, once the kubernetes plugin has synced.
	c := &dns.Client{Timeout: 2 * time.Second}
	query := func(addr, name string) (*dns.Msg, error) {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		r, _, err := c.Exchange(m, addr)
		return r, err
	}
	lastA := func(r *dns.Msg) string {
		if r == nil || len(r.Answer) == 0 {
			return ""
		}
		if a, ok := r.Answer[len(r.Answer)-1].(*dns.A); ok {
			return a.A.String()
		}
		return ""
	}
	err := testkit.Until(t.Context(), testkit.Interval, 30*time.Second, func(context.Context) (bool, error) {
		r, err := query(nodeAddr, "kubernetes.default.svc.cluster.local.")
		if err != nil {
			return false, err
		}
		return lastA(r) == "10.96.0.1", fmt.Errorf("answer %v", r)
	})
	if err != nil {
		t.Fatalf("kubernetes.default.svc.cluster.local via the node cache: %v\n%s", err, errOut.String())
	}
	r, err := query(nodeAddr, "kubernetes.search.default.cluster.local.ap.k8s.io.")
	if err != nil || len(r.Answer) != 2 || lastA(r) != "10.96.0.1" {
		t.Errorf("autopath via the node cache: %v, %v; want CNAME + A 10.96.0.1", r, err)
	} else if cn, ok := r.Answer[0].(*dns.CNAME); !ok || cn.Target != "kubernetes.default.svc.cluster.local." {
		t.Errorf("autopath answer %v; want a CNAME to kubernetes.default.svc.cluster.local.", r.Answer[0])
	}
	// Reverse lookups of Service IPs go through the node cache to the
	// cluster DNS's kubernetes plugin, not upstream.
	ptr := new(dns.Msg)
	ptr.SetQuestion("1.0.96.10.in-addr.arpa.", dns.TypePTR)
	if r, _, err := c.Exchange(ptr, nodeAddr); err != nil || len(r.Answer) != 1 {
		t.Errorf("PTR 10.96.0.1 via the node cache: %v, %v", r, err)
	} else if p, ok := r.Answer[0].(*dns.PTR); !ok || p.Ptr != "kubernetes.default.svc.cluster.local." {
		t.Errorf("PTR 10.96.0.1 via the node cache: %v; want kubernetes.default.svc.cluster.local.", r.Answer[0])
	}
	if r, err := query(nodeAddr, "www.example.org."); err != nil || lastA(r) != "192.0.2.80" {
		t.Errorf("external name via the node cache: %v, %v; want the upstream's 192.0.2.80", r, err)
	}
	// An autopath name outside the cluster: the node cache sends it to the
	// cluster DNS over TCP, and the cluster DNS forwards the candidates
	// over UDP (prefer_udp) — the upstream here has no TCP listener. The
	// upstream answers every name, so the first forwarded candidate (the
	// host search domain) wins.
	r, err = query(nodeAddr, "www.example.org.search.default.cluster.local.ap.k8s.io.")
	if err != nil || len(r.Answer) != 2 || lastA(r) != "192.0.2.80" {
		t.Errorf("external autopath name via the node cache: %v, %v; want CNAME + A 192.0.2.80", r, err)
	} else if cn, ok := r.Answer[0].(*dns.CNAME); !ok || cn.Target != "www.example.org.corp.example." {
		t.Errorf("external autopath answer %v; want a CNAME to the host search candidate", r.Answer[0])
	}
	if r, err := query(dnsAddr, "kubernetes.search.default.cluster.local.ap.k8s.io."); err != nil || lastA(r) != "10.96.0.1" {
		t.Errorf("autopath straight to the cluster DNS: %v, %v", r, err)
	}
	// Only the node cache chooses the search list: an option sent straight
	// to the cluster DNS from another address (127.0.0.2, Linux) is ignored,
	// so its domain is not tried and the cluster DNS's own host search list
	// (host_search, from --upstream-resolv-conf) answers.
	if runtime.GOOS == "linux" {
		forger := &dns.Client{Timeout: 2 * time.Second, Dialer: &net.Dialer{LocalAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)}}}
		m := new(dns.Msg)
		m.SetQuestion("www.example.org.search.default.cluster.local.ap.k8s.io.", dns.TypeA)
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: 65534, Data: []byte("default.svc.cluster.local,forged.example")}}
		if r, _, err := forger.Exchange(m, dnsAddr); err != nil || len(r.Answer) == 0 {
			t.Errorf("forged option from 127.0.0.2: %v, %v", r, err)
		} else if cn, ok := r.Answer[0].(*dns.CNAME); !ok || cn.Target != "www.example.org.corp.example." {
			t.Errorf("forged option from 127.0.0.2: answer %v; want a CNAME to the host_search candidate (option ignored)", r.Answer[0])
		}
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after shutdown: %s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("up did not stop")
	}
	if _, err := os.Stat(upstate.Path(dir)); !os.IsNotExist(err) {
		t.Errorf("up.json after a clean stop: %v; want none", err)
	}
}

// TestUpRefusesLoop: an upstream that is one of up's own DNS addresses
// would forward queries in a circle.
func TestUpRefusesLoop(t *testing.T) {
	_, stderr, code := runCmd(t, "", "up", "--data-dir", t.TempDir(), "--nodecache-listen", "127.0.0.1:1153", "--upstream", "127.0.0.1:1153")
	if code != exitUsage || !strings.Contains(stderr, "upstream resolver 127.0.0.1:1153 is an address of dnsplane itself") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestUpRefusesServedDNSAddress: a second `up` whose --dns-listen another
// CoreDNS (the first `up`'s cluster DNS) already serves fails naming the
// address and the flag, instead of sharing it through SO_REUSEPORT and
// answering from two clusters in turn.
func TestUpRefusesServedDNSAddress(t *testing.T) {
	dnsAddr := testkit.FreeUDPTCPAddr(t)
	host, port, _ := net.SplitHostPort(dnsAddr)
	first, err := coredns.Start(t.Context(), ".:"+port+" {\n    bind "+host+"\n    chaos first\n}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := first.Stop(); err != nil {
			t.Errorf("stopping first: %v", err)
		}
	}()
	_, stderr, code := runCmd(t, "", "up", "--data-dir", t.TempDir(), "--secure-port", "0", "--log-level", "error",
		"--dns-listen", dnsAddr, "--nodecache-listen", "", "--upstream", "192.0.2.53")
	want := "cluster DNS: " + dnsAddr + " is already served by another process (" + testkit.Self() + "; --dns-listen picks another address)"
	if code != exitInvalid || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitInvalid, want)
	}
}

// TestBadFlagsBeforeStart: flags that cannot work are usage errors (exit 2)
// naming the flag, found before etcd starts: no etcd dir is left behind.
func TestBadFlagsBeforeStart(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"port", []string{"--secure-port", "70000"}, "error: --secure-port 70000: want a port number, 0-65535 (0 picks a free one)\n"},
		{"range", []string{"--service-cluster-ip-range", "10.96.0.0/33"},
			"error: --service-cluster-ip-range \"10.96.0.0/33\": netip.ParsePrefix(\"10.96.0.0/33\"): prefix length out of range\n"},
		{"cluster domain", []string{"--cluster-domain", "Bad_Domain"},
			"error: --cluster-domain \"Bad_Domain\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n"},
	}
	// Another process holding up's default DNS addresses changes nothing:
	// flags are checked before any address is probed or anything logged.
	holdDefaultDNS(t)
	for _, cmd := range []string{"up", "apiserver"} {
		for _, tt := range tests {
			if cmd == "apiserver" && tt.name == "cluster domain" {
				continue // an up flag
			}
			t.Run(cmd+" "+tt.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "data")
				args := append([]string{cmd, "--data-dir", dir, "--upstream", "192.0.2.53", "--nodecache-listen", ""}, tt.args...)
				if cmd == "apiserver" {
					args = append([]string{cmd, "--data-dir", dir}, tt.args...)
				}
				out, errOut, code := runCmd(t, "", args...)
				if code != exitUsage || out != "" || errOut != tt.want {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, exitUsage, tt.want)
				}
				if _, err := os.Stat(filepath.Join(dir, "etcd")); !os.IsNotExist(err) {
					t.Errorf("etcd dir: %v; want none", err)
				}
			})
		}
	}
}

// TestSecurePortInUse: a port in use names the flag that moves it.
func TestSecurePortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	dir := filepath.Join(t.TempDir(), "data")
	_, errOut, code := runCmd(t, "", "apiserver", "--data-dir", dir, "--secure-port", port)
	want := "error: --secure-port " + port + ": 127.0.0.1:" + port + " is already in use by another process (" + testkit.Self() + "); choose another port with --secure-port (0 picks a free one)"
	if code != exitInvalid || !strings.HasPrefix(errOut, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, exitInvalid, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); !os.IsNotExist(err) {
		t.Errorf("etcd dir: %v; want none", err)
	}
}

// TestForeignKubeconfig: a kubeconfig dnsplane did not write is kept and
// start-up refused, naming it.
func TestForeignKubeconfig(t *testing.T) {
	dir := t.TempDir()
	mine := "apiVersion: v1\nkind: Config\ncurrent-context: prod\ncontexts:\n- name: prod\n  context: {cluster: prod, user: me}\n"
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCmd(t, "", "apiserver", "--data-dir", dir, "--secure-port", "0")
	want := "error: " + path + ` was not written by dnsplane (its current context is "prod"), and dnsplane does not overwrite it: move it away or choose another --data-dir` + "\n"
	if code != exitUsage || errOut != want {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, exitUsage, want)
	}
	if got, _ := os.ReadFile(path); string(got) != mine {
		t.Errorf("kubeconfig changed:\n%s", got)
	}
}

// holdDefaultDNS makes sure another socket holds up's default DNS
// addresses for the rest of the test, as a second `up` or a stub resolver
// would: it binds them itself, or finds them already held. It reports
// whether they are held (false without the privilege for port 53).
func holdDefaultDNS(t *testing.T) bool {
	t.Helper()
	for _, addr := range []string{defaultDNSListen, defaultNodeCacheListen} {
		pc, err := net.ListenPacket("udp", addr)
		switch {
		case err == nil:
			t.Cleanup(func() { _ = pc.Close() })
		case errors.Is(err, syscall.EADDRINUSE):
		case errors.Is(err, syscall.EACCES):
			return false
		default:
			t.Fatalf("holding %s: %v", addr, err)
		}
		l, err := net.Listen("tcp", addr)
		switch {
		case err == nil:
			t.Cleanup(func() { _ = l.Close() })
		case errors.Is(err, syscall.EADDRINUSE):
		default:
			t.Fatalf("holding %s: %v", addr, err)
		}
	}
	return true
}

var bannerAddrRE = regexp.MustCompile(`(?m)^  (cluster DNS|node cache):  ?(\S+)`)

// TestUpMovesOffHeldDefaults: with up's default DNS addresses held by
// another process, `up` on its defaults serves on other loopback
// addresses on port 53 (never another port: pods' resolv.conf names no
// port), says so, and the pods the agent starts get a resolv.conf whose
// nameservers answer on port 53.
func TestUpMovesOffHeldDefaults(t *testing.T) {
	if !holdDefaultDNS(t) {
		t.Skip("needs the privilege for port 53")
	}
	dir := t.TempDir()
	hostConf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(hostConf, []byte("search corp.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	upstream := startUpstream(t, net.IPv4(192, 0, 2, 80))
	out := &notifyingBuffer{marker: "export KUBECONFIG=", seen: make(chan struct{})}
	errOut := &notifyingBuffer{seen: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"up", "--data-dir", dir, "--secure-port", "0", "--log-level", "warn",
			"--upstream", upstream, "--upstream-resolv-conf", hostConf}, strings.NewReader(""), out, errOut)
	}()
	select {
	case <-out.seen:
	case code := <-done:
		t.Fatalf("up exited early with %d: %s%s", code, out.String(), errOut.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("up did not come up: %s%s", out.String(), errOut.String())
	}
	served := map[string]string{}
	for _, m := range bannerAddrRE.FindAllStringSubmatch(out.String(), -1) {
		served[m[1]] = m[2]
	}
	for role, def := range map[string]string{"cluster DNS": defaultDNSListen, "node cache": defaultNodeCacheListen} {
		ap, err := netip.ParseAddrPort(served[role])
		if err != nil || ap.Port() != 53 || served[role] == def {
			t.Errorf("%s on %q; want another address than %s, on port 53:\n%s", role, served[role], def, out.String())
		}
		if !strings.Contains(out.String(), served[role]+" ("+def+" is held by another process)") {
			t.Errorf("banner does not say why the %s moved:\n%s", role, out.String())
		}
	}
	if n := strings.Count(errOut.String(), "a default DNS address is held by another process"); n != 1 {
		t.Errorf("%d log lines about the move; want 1:\n%s", n, errOut.String())
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	pod, err := client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{NodeName: defaultNodeName, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resolvPath := filepath.Join(podfiles.Dir(filepath.Join(dir, "agent"), "default", pod.Name, pod.UID), podfiles.ResolvConf)
	var resolv []byte
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		resolv, err = os.ReadFile(resolvPath)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the agent wrote no %s: %v\n%s", resolvPath, err, errOut.String())
	}
	var nameservers []string
	for line := range strings.Lines(string(resolv)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
			nameservers = append(nameservers, f[1])
		}
	}
	want := []string{hostOf(served["node cache"]), hostOf(served["cluster DNS"])}
	if !slices.Equal(nameservers, want) {
		t.Fatalf("pod's nameservers %v; want %v (node cache, cluster DNS):\n%s", nameservers, want, resolv)
	}
	// What a pod's resolver does: ask each nameserver on port 53.
	c := &dns.Client{Timeout: 2 * time.Second}
	for _, ns := range nameservers {
		m := new(dns.Msg)
		m.SetQuestion("kubernetes.default.svc.cluster.local.", dns.TypeA)
		var r *dns.Msg
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			r, _, err = c.Exchange(m, net.JoinHostPort(ns, "53"))
			return err == nil && len(r.Answer) > 0, nil
		}); err != nil {
			t.Errorf("kubernetes.default.svc.cluster.local at %s:53: %v, %v", ns, r, err)
			continue
		}
		if a, ok := r.Answer[len(r.Answer)-1].(*dns.A); !ok || a.A.String() != "10.96.0.1" {
			t.Errorf("kubernetes.default.svc.cluster.local at %s:53: %v; want 10.96.0.1", ns, r.Answer)
		}
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after shutdown: %s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("up did not stop")
	}
}

func hostOf(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	return host
}

// TestUpRefusesHeldGivenAddress: an address given with --dns-listen or
// --nodecache-listen that another process holds is refused naming the
// flag, before etcd starts, and never moved, not even the default address
// given explicitly.
func TestUpRefusesHeldGivenAddress(t *testing.T) {
	hold := func(t *testing.T) string {
		t.Helper()
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pc.Close() })
		return pc.LocalAddr().String()
	}
	free := func(t *testing.T) string {
		t.Helper()
		return testkit.FreeUDPTCPAddr(t)
	}
	held := func(*testing.T) string { return defaultDNSListen }
	// WHO: the process portowner names, this test's (or, for a default
	// address held before the test, whichever holds it).
	const dnsHeld = "cluster DNS: %s is already served by another process (WHO; --dns-listen picks another address)"
	tests := []struct {
		name            string
		dns, nodeCache  func(*testing.T) string
		needDefaultHeld bool
		want            string // %s: the address held
	}{
		{name: "dns", dns: hold, nodeCache: free, want: dnsHeld},
		{name: "nodecache", dns: free, nodeCache: hold,
			want: `node cache: %s is already served by another process (WHO; --nodecache-listen picks another address, "" turns it off)`},
		{name: "the default, given", needDefaultHeld: true, dns: held, nodeCache: free, want: dnsHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needDefaultHeld && !holdDefaultDNS(t) {
				t.Skip("needs the privilege for port 53")
			}
			dnsAddr, ncAddr := tt.dns(t), tt.nodeCache(t)
			taken := dnsAddr
			if tt.want != dnsHeld {
				taken = ncAddr
			}
			dir := filepath.Join(t.TempDir(), "data")
			out, errOut, code := runCmd(t, "", "up", "--data-dir", dir, "--secure-port", "0", "--upstream", "192.0.2.53",
				"--dns-listen", dnsAddr, "--nodecache-listen", ncAddr)
			who := regexp.QuoteMeta(testkit.Self())
			if tt.needDefaultHeld {
				who = `[^;()]+, pid \d+`
			}
			want := "^" + strings.Replace(regexp.QuoteMeta("error: "+fmt.Sprintf(tt.want, taken)+"\n"), "WHO", who, 1) + "$"
			if code != exitInvalid || out != "" || !regexp.MustCompile(want).MatchString(errOut) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %s", code, out, errOut, exitInvalid, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "etcd")); !os.IsNotExist(err) {
				t.Errorf("etcd dir: %v; want none", err)
			}
		})
	}
}
