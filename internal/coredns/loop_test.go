package coredns

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// openFDs is the number of descriptors this process holds.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// startClusterDNS runs a cluster DNS rendered by corefile.ClusterDNS on
// addr (the kubernetes plugin reading kubeconfig) forwarding "." to
// upstreams and stubs to theirs, stopped when the test ends.
func startClusterDNS(t *testing.T, ctx context.Context, addr, kubeconfig string, upstreams []string, stubs []corefile.StubDomain) {
	t.Helper()
	text, err := corefile.ClusterDNS(corefile.ClusterDNSOptions{
		Listen:     addr,
		Kubeconfig: kubeconfig,
		Upstreams:  upstreams,
		Stubs:      stubs,
	})
	if err != nil {
		t.Fatal(err)
	}
	startCorefile(t, ctx, text)
}

func startCorefile(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	srv, err := Start(ctx, text, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
}

// exchangeLoop sends one query for name and wants SERVFAIL well within the
// time a forward plugin waits for an upstream, and an OPT record in the
// reply exactly when the query had one.
func exchangeLoop(t *testing.T, addr, name string, edns bool) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	if edns {
		m.SetEdns0(1232, false)
	}
	c := &dns.Client{Timeout: 3 * time.Second}
	start := time.Now()
	resp, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s @%s (EDNS %v): %v after %v", name, addr, edns, err, time.Since(start))
	}
	if resp.Rcode != dns.RcodeServerFailure {
		t.Errorf("%s @%s: rcode %s, want SERVFAIL", name, addr, dns.RcodeToString[resp.Rcode])
	}
	if got := resp.IsEdns0() != nil; got != edns {
		t.Errorf("%s @%s: query with EDNS %v got a reply with OPT %v:\n%s", name, addr, edns, got, resp)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("%s @%s: answered after %v", name, addr, d)
	}
}

// TestForwardToOwnAddress: a cluster DNS whose upstream resolver and
// forwarded zone name its own address, and a forwarded zone that goes round
// through the node cache in front of it (both in one process, as in
// `dnsplane up`), answer SERVFAIL at once instead of forwarding each
// query to themselves until the process runs out of descriptors; and the
// descriptors stay bounded over many such queries.
func TestForwardToOwnAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, _ := startAPIServer(t, ctx)

	cluster := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	nodeCache := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	// fwd.test and "." loop inside the cluster DNS; nc.test goes round
	// through the node cache, which forwards every name back to it.
	startClusterDNS(t, ctx, cluster, kubeconfig, []string{cluster}, []corefile.StubDomain{
		{Domain: "fwd.test", Upstreams: []string{cluster}},
		{Domain: "nc.test", Upstreams: []string{nodeCache}},
	})
	text, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:     []string{nodeCache},
		ClusterDNS: []string{cluster},
	})
	if err != nil {
		t.Fatal(err)
	}
	startCorefile(t, ctx, text)

	before := openFDs(t)
	for i := range 50 {
		for _, edns := range []bool{false, true} {
			exchangeLoop(t, cluster, fmt.Sprintf("www%d.fwd.test.", i), edns)
			exchangeLoop(t, cluster, fmt.Sprintf("www%d.example.org.", i), edns)
			exchangeLoop(t, nodeCache, fmt.Sprintf("node%d.example.org.", i), edns)
			exchangeLoop(t, nodeCache, fmt.Sprintf("www%d.nc.test.", i), edns)
			// Through the node cache's cluster block to the cluster DNS,
			// whose reverse zones fall through to its looping upstream.
			exchangeLoop(t, nodeCache, fmt.Sprintf("%d.2.0.192.in-addr.arpa.", i), edns)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	// The forward plugins keep a few pooled connections per upstream;
	// a loop holds one more per hop per query until it runs out.
	if after := openFDs(t); after > before+32 {
		t.Errorf("open descriptors went from %d to %d over 500 looping queries", before, after)
	}
}

// TestForwardLoopThroughTwoServers: A forwards a zone to B, and B forwards
// it back to A. The query comes back to A with A's mark and is refused
// there.
func TestForwardLoopThroughTwoServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, _ := startAPIServer(t, ctx)

	a := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	b := fmt.Sprintf("127.0.0.2:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	// Neither reaches a real upstream: "." goes to a port nothing
	// answers on, so only the forwarded zone is exercised.
	nowhere := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	startClusterDNS(t, ctx, a, kubeconfig, []string{nowhere}, []corefile.StubDomain{{Domain: "ab.test", Upstreams: []string{b}}})
	startClusterDNS(t, ctx, b, kubeconfig, []string{nowhere}, []corefile.StubDomain{{Domain: "ab.test", Upstreams: []string{a}}})
	for i := range 20 {
		exchangeLoop(t, a, fmt.Sprintf("x%d.ab.test.", i), i%2 == 0)
		exchangeLoop(t, b, fmt.Sprintf("y%d.ab.test.", i), i%2 == 0)
	}
}

// TestLoopMarkerOnTheWire: what the node cache's upstreams and cluster DNS
// see is one 8-byte marker option, and the client sees none of it; a
// client that sends a full marker is refused without the refusal being
// cached for the name.
func TestLoopMarkerOnTheWire(t *testing.T) {
	const markerCode = 65533
	// The node cache sends the cluster zones over TCP and every other
	// name over UDP, both to the cluster DNS: one stub per transport.
	clusterAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	cluster := startStub(t, "tcp", clusterAddr, markerCode, net.IPv4(10, 96, 0, 1))
	upstream := startStub(t, "udp", clusterAddr, markerCode, net.IPv4(192, 0, 2, 1))
	nodeCache := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	text, err := corefile.NodeCache(corefile.NodeCacheOptions{Listen: []string{nodeCache}, ClusterDNS: []string{clusterAddr}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCorefile(t, ctx, text)

	c := &dns.Client{Timeout: 3 * time.Second}
	ask := func(name string, opt *dns.OPT) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		if opt != nil {
			m.Extra = []dns.RR{opt}
		}
		resp, _, err := c.Exchange(m, nodeCache)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return resp
	}
	for _, tc := range []struct {
		name string
		s    *stub
	}{{"www.example.org.", upstream}, {"svc1.ns1.svc.cluster.local.", cluster}} {
		resp := ask(tc.name, nil)
		if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 || resp.IsEdns0() != nil {
			t.Errorf("%s: reply %v, want one answer and no OPT", tc.name, resp)
		}
		if got, _ := tc.s.get(tc.name); len(got) != 1 || len(got[0]) != 8 {
			t.Errorf("%s: the server forwarded to saw marker options %q, want one of 8 bytes", tc.name, got)
		}
	}

	full := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	full.SetUDPSize(1232)
	full.Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: markerCode, Data: make([]byte, 8*8)}}
	if resp := ask("poison.example.org.", full); resp.Rcode != dns.RcodeRefused {
		t.Errorf("a full marker: %s, want REFUSED", dns.RcodeToString[resp.Rcode])
	}
	if resp := ask("poison.example.org.", nil); resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
		t.Errorf("after a refused full marker: %v, want the answer", resp)
	}
}
