//go:build linux

package coredns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// proxyQuery is one question the counting proxy received from the pod.
type proxyQuery struct {
	name  string // lower case, fully qualified
	qtype uint16
	net   string // "udp" or "tcp"
	reply string // rcode and answer types the node cache returned
}

// countingProxy stands where a pod's nameserver is: it records every
// question it receives and forwards the query unchanged (same ID, flags and
// question, same transport) to target, returning its reply. glibc can only
// talk to port 53, which the node cache under test does not listen on.
type countingProxy struct {
	target string

	mu      sync.Mutex
	queries []proxyQuery
	errs    []error
}

func (p *countingProxy) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	network := "udp"
	if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
		network = "tcp"
	}
	questions := slices.Clone(r.Question)
	c := &dns.Client{Net: network, Timeout: 5 * time.Second, UDPSize: dns.MaxMsgSize}
	reply, _, err := c.Exchange(r, p.target)
	summary := "no reply"
	if err == nil {
		var types []string
		for _, rr := range reply.Answer {
			types = append(types, dns.TypeToString[rr.Header().Rrtype])
		}
		summary = dns.RcodeToString[reply.Rcode]
		if len(types) > 0 {
			summary += " " + strings.Join(types, ",")
		}
	}
	p.mu.Lock()
	for _, q := range questions {
		p.queries = append(p.queries, proxyQuery{name: strings.ToLower(q.Name), qtype: q.Qtype, net: network, reply: summary})
	}
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("forwarding %v over %s: %w", questions, network, err))
	}
	p.mu.Unlock()
	if err != nil {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeServerFailure)
		_ = w.WriteMsg(m)
		return
	}
	_ = w.WriteMsg(reply)
}

// take returns and clears what was recorded since the last call.
func (p *countingProxy) take() ([]proxyQuery, []error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q, e := p.queries, p.errs
	p.queries, p.errs = nil, nil
	return q, e
}

// listenPort53 binds UDP and TCP port 53 on a random 127.53.X.1 (all of
// 127/8 is routed to lo on Linux, so no interface is touched). The error
// is the last bind failure.
func listenPort53() (string, net.PacketConn, net.Listener, error) {
	var lastErr error
	for range 10 {
		ip := fmt.Sprintf("127.53.%d.1", 1+rand.IntN(254))
		addr := net.JoinHostPort(ip, "53")
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			lastErr = err
			if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
				break
			}
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			pc.Close()
			lastErr = err
			if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
				break
			}
			continue
		}
		return ip, pc, l, nil
	}
	return "", nil, nil, lastErr
}

// ipv6Expectation tells whether getaddrinfo (AI_ADDRCONFIG, as getent
// ahosts asks) will send AAAA queries on this host: "yes" with a global
// IPv6 address, "no" with no non-loopback IPv6 address, "maybe" with only
// link-local ones.
func ipv6Expectation() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "maybe"
	}
	linkLocal := false
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.To4() != nil || n.IP.IsLoopback() {
			continue
		}
		if n.IP.IsLinkLocalUnicast() {
			linkLocal = true
			continue
		}
		return "yes"
	}
	if linkLocal {
		return "maybe"
	}
	return "no"
}

// getentResult is one `getent ahosts NAME` run inside the pod's files.
type getentResult struct {
	exit    int
	addrs   []string // sorted, distinct
	stdout  string
	stderr  string
	queries []proxyQuery
	perType map[uint16]int
	tcp     int
}

// TestGlibcResolverAutopath is the real-resolver counterpart of
// TestAutopathMatchesClusterFirst: glibc's getaddrinfo (getent ahosts), in
// a private mount namespace whose /etc/resolv.conf is what internal/
// resolvconf generates for a pod in ns1, resolves each name class against
// the node cache under ClusterFirst and under ClusterFirstWithAutopath. A
// counting proxy on port 53 in front of the node cache counts the queries
// the pod sends.
func TestGlibcResolverAutopath(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and two CoreDNS instances and runs getent in mount namespaces")
	}
	for _, tool := range []string{"getent", "unshare", "mount", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	if out, err := exec.Command("unshare", "-m", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot create a private mount namespace (unshare -m needs root or CAP_SYS_ADMIN): %v: %s", err, bytes.TrimSpace(out))
	}
	proxyIP, proxyPC, proxyL, err := listenPort53()
	if err != nil {
		t.Skipf("cannot bind port 53 on a 127.53.x.1 loopback address for glibc's nameserver: %v", err)
	}
	t.Cleanup(func() { proxyPC.Close(); proxyL.Close() })

	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	st := startAutopathStack(t, ctx)
	clusterIPs, nodeAddr := st.clusterIPs, st.nodeAddr

	// The pod's nameserver: the counting proxy in front of the node cache.
	proxy := &countingProxy{target: nodeAddr}
	for _, s := range []*dns.Server{{PacketConn: proxyPC, Handler: proxy}, {Listener: proxyL, Handler: proxy}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		errc := make(chan error, 1)
		go func() { errc <- s.ActivateAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			t.Fatalf("counting proxy: %v", err)
		}
		t.Cleanup(func() { _ = s.Shutdown() })
	}

	// The pod's files: resolv.conf from internal/resolvconf as the node
	// agent writes it, and an NSS config and hosts file of our own so the
	// machine's (nscd, systemd-resolved, mdns…) play no part.
	dir := t.TempDir()
	writeFile := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hostResolv := writeFile("host-resolv.conf", "search corp.example\nnameserver 203.0.113.53\n")
	nsswitch := writeFile("nsswitch.conf", "hosts: files dns\n")
	hosts := writeFile("hosts", "127.0.0.1 localhost\n")
	host, err := resolvconf.ParseFile(hostResolv)
	if err != nil {
		t.Fatal(err)
	}
	nodeCfg := resolvconf.Node{
		ClusterDomain:  "cluster.local",
		ClusterDNS:     []string{proxyIP},
		NodeCache:      []string{proxyIP},
		Host:           host,
		HostResolvConf: true,
	}
	type policy struct {
		name string
		conf resolvconf.Config
		path string
	}
	policies := []*policy{
		{name: string(corev1.DNSClusterFirst)},
		{name: string(dpcorev1.DNSClusterFirstWithAutopath)},
	}
	for _, p := range policies {
		pod := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "client", Namespace: "ns1", UID: "uid-1"}}
		pod.Spec.DNSPolicy = corev1.DNSPolicy(p.name)
		conf, warnings, err := resolvconf.ForPod(pod, nodeCfg)
		if err != nil {
			t.Fatalf("%s resolv.conf: %v", p.name, err)
		}
		if len(warnings) > 0 {
			t.Fatalf("%s resolv.conf warnings: %v", p.name, warnings)
		}
		p.conf = conf
		p.path = writeFile(p.name+"-resolv.conf", string(conf.Render()))
		t.Logf("%s resolv.conf:\n%s", p.name, conf.Render())
	}
	cf, ap := policies[0], policies[1]
	if want := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}; !slices.Equal(cf.conf.Searches, want) {
		t.Fatalf("ClusterFirst search %q, want %q", cf.conf.Searches, want)
	}
	apSearch := searchpath.SearchName("ns1", "cluster.local")
	if !slices.Equal(ap.conf.Searches, []string{apSearch}) {
		t.Fatalf("autopath search %q, want %q", ap.conf.Searches, apSearch)
	}

	// getent exits 0 with addresses, 2 when the name is not found.
	const script = `mount --bind "$1" /etc/resolv.conf && mount --bind "$2" /etc/nsswitch.conf && mount --bind "$3" /etc/hosts && exec getent ahosts "$4"`
	getent := func(t *testing.T, resolv, name string) getentResult {
		t.Helper()
		proxy.take()
		gctx, gcancel := context.WithTimeout(ctx, 60*time.Second)
		defer gcancel()
		cmd := exec.CommandContext(gctx, "unshare", "-m", "sh", "-c", script, "sh", resolv, nsswitch, hosts, name)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr := cmd.Run()
		res := getentResult{stdout: stdout.String(), stderr: stderr.String(), perType: map[uint16]int{}}
		var exitErr *exec.ExitError
		switch {
		case runErr == nil:
		case errors.As(runErr, &exitErr) && gctx.Err() == nil:
			res.exit = exitErr.ExitCode()
		default:
			t.Fatalf("getent ahosts %s: %v (stderr %q)", name, runErr, res.stderr)
		}
		seen := map[string]bool{}
		for line := range strings.Lines(res.stdout) {
			if f := strings.Fields(line); len(f) > 0 && !seen[f[0]] {
				seen[f[0]] = true
				res.addrs = append(res.addrs, f[0])
			}
		}
		slices.Sort(res.addrs)
		var errs []error
		res.queries, errs = proxy.take()
		for _, err := range errs {
			t.Errorf("proxy: %v", err)
		}
		for _, q := range res.queries {
			res.perType[q.qtype]++
			if q.net == "tcp" {
				res.tcp++
			}
		}
		return res
	}

	tests := []struct {
		class, name string
		ip          string // "" for not found
	}{
		{"same namespace", "svc1", clusterIPs["svc1"]},
		{"cross namespace", "svc2.ns2", clusterIPs["svc2"]},
		{"external", "example.com", "93.184.216.34"},
		{"host search path", "intranet", "10.9.9.9"},
		{"nonexistent", "nope", ""},
	}
	aaaa := ipv6Expectation()
	t.Logf("AAAA queries expected (getaddrinfo AI_ADDRCONFIG, from this host's IPv6 addresses): %s", aaaa)
	// checkTypes: glibc asks A, and AAAA exactly when AI_ADDRCONFIG finds
	// IPv6 on the host; nothing else.
	checkTypes := func(t *testing.T, pol string, r getentResult) {
		t.Helper()
		for qt := range r.perType {
			if qt != dns.TypeA && qt != dns.TypeAAAA {
				t.Errorf("%s: unexpected %s queries", pol, dns.TypeToString[qt])
			}
		}
		if r.perType[dns.TypeA] == 0 {
			t.Errorf("%s: no A query arrived", pol)
		}
		switch n := r.perType[dns.TypeAAAA]; {
		case aaaa == "yes" && n == 0:
			t.Errorf("%s: no AAAA query arrived although the host has a global IPv6 address", pol)
		case aaaa == "no" && n > 0:
			t.Errorf("%s: %d AAAA queries arrived although the host has no IPv6 address", pol, n)
		}
	}
	describe := func(r getentResult) string {
		var b strings.Builder
		for _, q := range r.queries {
			fmt.Fprintf(&b, "\n    %-4s %-5s %-48s -> %s", q.net, dns.TypeToString[q.qtype], q.name, q.reply)
		}
		return fmt.Sprintf("exit %d, addrs %v, stderr %q, queries:%s", r.exit, r.addrs, r.stderr, b.String())
	}

	type row struct{ cf, ap getentResult }
	table := make([]row, len(tests))
	for i, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			cfRes := getent(t, cf.path, tt.name)
			apRes := getent(t, ap.path, tt.name)
			table[i] = row{cfRes, apRes}
			t.Logf("ClusterFirst getent ahosts %s: %s\nstdout:\n%s", tt.name, describe(cfRes), cfRes.stdout)
			t.Logf("ClusterFirstWithAutopath getent ahosts %s: %s\nstdout:\n%s", tt.name, describe(apRes), apRes.stdout)
			checkTypes(t, "ClusterFirst", cfRes)
			checkTypes(t, "ClusterFirstWithAutopath", apRes)
			for qt, n := range cfRes.perType {
				if apRes.perType[qt] == 0 && n > 0 {
					t.Errorf("ClusterFirst sent %s queries, autopath none", dns.TypeToString[qt])
				}
			}

			if tt.ip == "" {
				for _, r := range []struct {
					pol string
					res getentResult
				}{{"ClusterFirst", cfRes}, {"ClusterFirstWithAutopath", apRes}} {
					if r.res.exit != 2 || len(r.res.addrs) != 0 {
						t.Errorf("%s: getent ahosts %s exit %d, addrs %v; want exit 2 (not found), no addresses", r.pol, tt.name, r.res.exit, r.res.addrs)
					}
				}
				// ClusterFirst: every search path, then the name as is.
				want := 1 + len(cf.conf.Searches)
				for qt, n := range cfRes.perType {
					if n != want {
						t.Errorf("ClusterFirst: %d %s queries for %s, want 1+len(search) = %d", n, dns.TypeToString[qt], tt.name, want)
					}
				}
				// Autopath: the one search path, then at most the name as is.
				allowed := []string{tt.name + "." + apSearch + ".", tt.name + "."}
				for qt, n := range apRes.perType {
					if n > 2 {
						t.Errorf("autopath: %d %s queries for %s, want at most 2", n, dns.TypeToString[qt], tt.name)
					}
				}
				for _, q := range apRes.queries {
					if !slices.Contains(allowed, q.name) {
						t.Errorf("autopath: query for %s, want only %q", q.name, allowed)
					}
				}
				return
			}

			want := []string{tt.ip}
			if cfRes.exit != 0 || !slices.Equal(cfRes.addrs, want) {
				t.Errorf("ClusterFirst: getent ahosts %s exit %d, addrs %v; want exit 0, %v", tt.name, cfRes.exit, cfRes.addrs, want)
			}
			if apRes.exit != 0 || !slices.Equal(apRes.addrs, want) {
				t.Errorf("autopath: getent ahosts %s exit %d, addrs %v; want exit 0, %v", tt.name, apRes.exit, apRes.addrs, want)
			}
			for qt, n := range apRes.perType {
				if n != 1 {
					t.Errorf("autopath: %d %s queries for %s, want 1", n, dns.TypeToString[qt], tt.name)
				}
			}
			apName := tt.name + "." + apSearch + "."
			for _, q := range apRes.queries {
				if q.name != apName {
					t.Errorf("autopath: query for %s, want only %s", q.name, apName)
				}
			}
		})
	}

	count := func(r getentResult) string {
		s := fmt.Sprintf("%d/%d", r.perType[dns.TypeA], r.perType[dns.TypeAAAA])
		if r.tcp > 0 {
			s += fmt.Sprintf(" (%d TCP)", r.tcp)
		}
		return s
	}
	t.Logf("queries arriving at the node cache per getent ahosts from a pod in ns1 (A/AAAA):")
	t.Logf("%-18s %-12s %-14s %-10s %s", "class", "name", "ClusterFirst", "autopath", "result")
	for i, tt := range tests {
		result := tt.ip
		if result == "" {
			result = fmt.Sprintf("not found (exit %d/%d)", table[i].cf.exit, table[i].ap.exit)
		}
		t.Logf("%-18s %-12s %-14s %-10s %s", tt.class, tt.name, count(table[i].cf), count(table[i].ap), result)
	}
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}
