package coredns

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// skipUnlessLinux skips tests that use loopback addresses other than
// 127.0.0.1: Linux routes all of 127.0.0.0/8 through lo, other systems
// need them configured.
func skipUnlessLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs 127.0.0.2 and 127.0.0.3 on lo (Linux)")
	}
}

// rejectedUntrusted returns coredns_searchexpand_option_rejected_total
// {reason="untrusted"} for the server listening on port.
func rejectedUntrusted(t *testing.T, port string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "coredns_searchexpand_option_rejected_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var server, reason string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "server":
					server = l.GetValue()
				case "reason":
					reason = l.GetValue()
				}
			}
			if reason == "untrusted" && strings.HasSuffix(server, ":"+port) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// TestAutopathUntrustedClient: on the stack `dnsplane up` runs, a client
// that is not the node cache sends the cluster DNS a forged search list
// option. searchexpand ignores it (the derived list is used, so the forged
// host search domain is not tried and no forged candidate goes upstream)
// and counts it as untrusted, while the same lookup through the node cache,
// whose forward sends from the trusted address, still uses the node's host
// search list.
func TestAutopathUntrustedClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and two CoreDNS instances")
	}
	skipUnlessLinux(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := startAutopathStack(t, ctx)
	if len(st.trusted) != 1 || st.trusted[0] != "127.0.0.1" {
		t.Fatalf("trusted %v, want the node cache's source address 127.0.0.1", st.trusted)
	}
	_, port, _ := net.SplitHostPort(st.clusterAddr)
	const apSuffix = ".search.ns1.cluster.local.ap.k8s.io."

	query := func(c *dns.Client, addr, name string, option []string) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		m.RecursionDesired = true
		if option != nil {
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte(strings.Join(option, ","))}}
		}
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			t.Fatalf("%s via %s: %v", name, addr, err)
		}
		return r
	}
	cnameTarget := func(r *dns.Msg) string {
		if r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
			if cn, ok := r.Answer[0].(*dns.CNAME); ok {
				return strings.ToLower(cn.Target)
			}
		}
		return ""
	}
	local := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	// A client on another loopback address: the cluster DNS sees it as
	// 127.0.0.2, which is not where the node cache forwards from.
	forger := &dns.Client{Net: "udp", Timeout: 5 * time.Second, Dialer: &net.Dialer{
		Timeout: 5 * time.Second, LocalAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)},
	}}
	forged := append(searchpath.Derived("ns1", "cluster.local"), "corp.example")

	// Through the node cache: its option (host search corp.example) is
	// accepted.
	before := rejectedUntrusted(t, port)
	if r := query(local, st.nodeAddr, "intranet"+apSuffix, nil); cnameTarget(r) != "intranet.corp.example." {
		t.Errorf("intranet via the node cache: %v; want CNAME intranet.corp.example. (host search list used)", r)
	}
	if after := rejectedUntrusted(t, port); after != before {
		t.Errorf("the node cache's option was rejected as untrusted (%v -> %v): trusted %v is not the address it forwards from", before, after, st.trusted)
	}

	// Forged, from 127.0.0.2: ignored and counted; the derived list does
	// not have corp.example.
	up0 := settledCount(t, st.upstreamQueries)
	if r := query(forger, st.clusterAddr, "intranet"+apSuffix, forged); r.Rcode != dns.RcodeNameError {
		t.Errorf("forged option from 127.0.0.2: %v; want NXDOMAIN (derived list, corp.example not tried)", r)
	}
	if after := rejectedUntrusted(t, port); after != before+1 {
		t.Errorf("option_rejected_total{reason=untrusted} went from %v to %v, want +1", before, after)
	}
	// Only the bare name went upstream, not the forged candidate.
	if n := st.upstreamQueries.Load() - up0; n != 1 {
		t.Errorf("forged query cost %d upstream queries, want 1 (the bare name)", n)
	}

	// A forged list of 32 distinct external domains, as a flood would send
	// it: each query still costs only the derived list's bare name
	// upstream. Fresh names so that the cluster DNS's cache answers none.
	// Over TCP: an option this long makes the query larger than the 512
	// bytes CoreDNS reads from a UDP packet. (The cluster DNS listens on
	// the same port for both.)
	tcpForger := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, Dialer: &net.Dialer{
		Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)},
	}}
	var list []string
	for i := range searchpath.MaxEntries {
		list = append(list, fmt.Sprintf("d%d.example.com", i))
	}
	const floods = 20
	up0 = settledCount(t, st.upstreamQueries)
	before = rejectedUntrusted(t, port)
	for q := range floods {
		if r := query(tcpForger, st.clusterAddr, fmt.Sprintf("flood%d%s", q, apSuffix), list); r.Rcode != dns.RcodeNameError {
			t.Fatalf("flood query %d: %v; want NXDOMAIN", q, r)
		}
	}
	if n := st.upstreamQueries.Load() - up0; n != floods {
		t.Errorf("%d forged queries with 32 domains cost %d upstream queries, want %d (the bare names)", floods, n, floods)
	}
	if after := rejectedUntrusted(t, port); after != before+floods {
		t.Errorf("option_rejected_total{reason=untrusted} went from %v to %v, want +%d", before, after, floods)
	}

	// The limit of trusting by address, documented in docs/autopath.md: a
	// local client sending from the node cache's own source address
	// (127.0.0.1) cannot be told apart from it, and its option is
	// accepted. The dedupe and max_forwarded bound what it can cost.
	if r := query(local, st.clusterAddr, "intranet"+apSuffix, forged); cnameTarget(r) != "intranet.corp.example." {
		t.Errorf("option from 127.0.0.1: %v; want it accepted (same address as the node cache)", r)
	}
}

// TestNodeCacheForwardSource: the address to trust is the one the node
// cache's forward sends from, which corefile.NodeCacheTrusted finds, not the node
// cache's listen address. A node cache listening on 127.0.0.3 forwards to a
// cluster DNS on 127.0.0.1 from 127.0.0.1: with that trusted its option is
// used; with the listen address trusted instead it would be rejected.
func TestNodeCacheForwardSource(t *testing.T) {
	skipUnlessLinux(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upstream, _ := startZoneResolver(t, []string{"corp.example."}, map[string]net.IP{
		"intranet.corp.example.": net.IPv4(10, 9, 9, 9),
	})
	clusterListen := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	nodeListen := fmt.Sprintf("127.0.0.3:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	derived, err := corefile.NodeCacheTrusted(clusterListen, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		trusted  string
		accepted bool
	}{
		{"NodeCacheTrusted", derived[0], true},
		{"the listen address", "127.0.0.3", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// No kubernetes plugin: the upstream answers NXDOMAIN for the
			// cluster candidates, which is all this test needs.
			cluster, err := Start(ctx, fmt.Sprintf(`.:%s {
    bind 127.0.0.1
    searchexpand cluster.local {
        trusted %s
    }
    forward . %s {
        prefer_udp
    }
}
`, strings.TrimPrefix(clusterListen, "127.0.0.1:"), tt.trusted, upstream), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cluster.Stop() }()
			nodeCorefile, err := corefile.NodeCache(corefile.NodeCacheOptions{
				Listen:     []string{nodeListen},
				ClusterDNS: []string{clusterListen},
				HostSearch: []string{"corp.example"},
				NoCache:    true,
			})
			if err != nil {
				t.Fatal(err)
			}
			node, err := Start(ctx, nodeCorefile, nil)
			if err != nil {
				t.Fatalf("node cache on %s: %v", nodeListen, err)
			}
			defer func() { _ = node.Stop() }()

			m := new(dns.Msg)
			m.SetQuestion("intranet.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
			r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, nodeListen)
			if err != nil {
				t.Fatal(err)
			}
			found := r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0
			if found != tt.accepted {
				t.Errorf("trusted %s: reply %v; want the node cache's host search list used: %v", tt.trusted, r, tt.accepted)
			}
		})
	}
}
