package coredns

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/corefile"
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
// forwarded zone name its own address, and a node cache in front of it
// whose upstream names the node cache's own address (both in one process,
// as in `dnsplane up`), answer SERVFAIL at once instead of forwarding each
// query to themselves until the process runs out of descriptors; and the
// descriptors stay bounded over many such queries.
func TestForwardToOwnAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, _ := startAPIServer(t, ctx)

	cluster := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startClusterDNS(t, ctx, cluster, kubeconfig, []string{cluster}, []corefile.StubDomain{{Domain: "fwd.test", Upstreams: []string{cluster}}})
	nodeCache := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	text, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:     []string{nodeCache},
		ClusterDNS: []string{cluster},
		Upstreams:  []string{nodeCache},
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
		t.Errorf("open descriptors went from %d to %d over 400 looping queries", before, after)
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

	a := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := fmt.Sprintf("127.0.0.2:%d", freePort(t))
	// Neither reaches a real upstream: "." goes to a port nothing
	// answers on, so only the forwarded zone is exercised.
	nowhere := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startClusterDNS(t, ctx, a, kubeconfig, []string{nowhere}, []corefile.StubDomain{{Domain: "ab.test", Upstreams: []string{b}}})
	startClusterDNS(t, ctx, b, kubeconfig, []string{nowhere}, []corefile.StubDomain{{Domain: "ab.test", Upstreams: []string{a}}})
	for i := range 20 {
		exchangeLoop(t, a, fmt.Sprintf("x%d.ab.test.", i), i%2 == 0)
		exchangeLoop(t, b, fmt.Sprintf("y%d.ab.test.", i), i%2 == 0)
	}
}
