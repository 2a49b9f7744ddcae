package searchexpand

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"    // Listen on 127.0.0.1 only.
	_ "github.com/coredns/coredns/plugin/file"    // The records in the test Corefile.
	_ "github.com/coredns/coredns/plugin/forward" // The upstream in the fan-out tests.
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

const rootZone = `$ORIGIN .
@ 30 IN SOA ns.test. admin.test. 1 7200 3600 1209600 30
@ 30 IN NS ns.test.
ns.test. 30 IN A 127.0.0.1
svc1.ns1.svc.cluster.local. 30 IN A 10.0.0.1
svc2.ns2.svc.cluster.local. 30 IN A 10.0.0.2
`

// corefile implements caddy.Input for a Corefile held in a string.
type corefile string

func (c corefile) Body() []byte       { return []byte(c) }
func (c corefile) Path() string       { return "Corefile" }
func (c corefile) ServerType() string { return "dns" }

// addDirective puts searchexpand before cache in the plugin order, as an
// external plugin's plugin.cfg entry does in a CoreDNS build.
func addDirective(t testing.TB) {
	t.Helper()
	if slices.Contains(dnsserver.Directives, pluginName) {
		return
	}
	i := slices.Index(dnsserver.Directives, "cache")
	if i < 0 {
		t.Fatal("no cache directive in dnsserver.Directives")
	}
	dnsserver.Directives = slices.Insert(dnsserver.Directives, i, pluginName)
}

// TestCoreDNSServer runs CoreDNS in-process with searchexpand in front of
// file serving a root zone, which stands for the kubernetes plugin and the
// upstream (two service records, NXDOMAIN for everything else). hosts would
// do for the records, but it answers SERVFAIL, not NXDOMAIN, for names it
// does not have, and template needs a module not in go.mod.
func TestCoreDNSServer(t *testing.T) {
	addDirective(t)
	caddy.Quiet = true
	dnsserver.Quiet = true
	zone := filepath.Join(t.TempDir(), "root.zone")
	if err := os.WriteFile(zone, []byte(rootZone), 0o600); err != nil {
		t.Fatal(err)
	}
	input := fmt.Sprintf(`.:0 {
    bind 127.0.0.1
    searchexpand cluster.local
    file %s .
}
`, zone)
	inst, err := caddy.Start(corefile(input))
	if err != nil {
		t.Fatalf("starting CoreDNS: %v", err)
	}
	defer func() {
		if err := inst.Stop(); err != nil {
			t.Errorf("stopping CoreDNS: %v", err)
		}
	}()
	srvs := inst.Servers()
	if len(srvs) == 0 || srvs[0].LocalAddr() == nil {
		t.Fatal("CoreDNS has no UDP listener")
	}
	addr := srvs[0].LocalAddr().String()

	tests := []struct {
		name   string
		qname  string
		rcode  int
		target string
		ip     string
	}{
		{"same namespace", "svc1.search.ns1.cluster.local.ap.k8s.io.", dns.RcodeSuccess, "svc1.ns1.svc.cluster.local.", "10.0.0.1"},
		{"cross namespace", "svc2.ns2.search.ns1.cluster.local.ap.k8s.io.", dns.RcodeSuccess, "svc2.ns2.svc.cluster.local.", "10.0.0.2"},
		{"nonexistent", "nope.search.ns1.cluster.local.ap.k8s.io.", dns.RcodeNameError, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion(tt.qname, dns.TypeA)
			resp, err := dns.Exchange(m, addr)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Rcode != tt.rcode || resp.Id != m.Id || len(resp.Question) != 1 || resp.Question[0].Name != tt.qname {
				t.Fatalf("response %v", resp)
			}
			if tt.target == "" {
				if len(resp.Answer) != 0 {
					t.Errorf("answers %v", resp.Answer)
				}
				return
			}
			if len(resp.Answer) != 2 {
				t.Fatalf("answers %v, want CNAME + A", resp.Answer)
			}
			c, ok := resp.Answer[0].(*dns.CNAME)
			if !ok || c.Hdr.Name != tt.qname || c.Target != tt.target {
				t.Errorf("first answer %v", resp.Answer[0])
			}
			a, ok := resp.Answer[1].(*dns.A)
			if !ok || a.Hdr.Name != tt.target || !a.A.Equal(net.ParseIP(tt.ip)) {
				t.Errorf("second answer %v", resp.Answer[1])
			}
		})
	}
}

// countingUpstream is a UDP resolver on 127.0.0.1 that answers NXDOMAIN to
// every query and counts the queries per lower-case name: the upstream
// the fan-out tests measure.
type countingUpstream struct {
	addr string
	mu   sync.Mutex
	seen map[string]int
}

func startCountingUpstream(t *testing.T) *countingUpstream {
	t.Helper()
	u := &countingUpstream{seen: map[string]int{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.addr = pc.LocalAddr().String()
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if len(r.Question) > 0 {
			u.mu.Lock()
			u.seen[strings.ToLower(r.Question[0].Name)]++
			u.mu.Unlock()
		}
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeNameError)
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return u
}

// counts returns the per-name counts and their total.
func (u *countingUpstream) counts() (map[string]int, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	total := 0
	for _, n := range u.seen {
		total += n
	}
	return maps.Clone(u.seen), total
}

// startForwarding runs CoreDNS on 127.0.0.1 with searchexpand (and the
// given block lines) in front of forward to upstream, and returns its TCP
// address (port 0 gives UDP another one). forward has prefer_udp, as the cluster DNS's should: the
// queries arrive over TCP.
func startForwarding(t *testing.T, block, upstream string) string {
	t.Helper()
	addDirective(t)
	caddy.Quiet = true
	dnsserver.Quiet = true
	input := fmt.Sprintf(`.:0 {
    bind 127.0.0.1
    searchexpand cluster.local {
%s
    }
    forward . %s {
        prefer_udp
    }
}
`, block, upstream)
	inst, err := caddy.Start(corefile(input))
	if err != nil {
		t.Fatalf("starting CoreDNS: %v\n%s", err, input)
	}
	t.Cleanup(func() { _ = inst.Stop() })
	srvs := inst.Servers()
	if len(srvs) == 0 || srvs[0].Addr() == nil {
		t.Fatal("CoreDNS has no TCP listener")
	}
	return srvs[0].Addr().String()
}

// exchangeWithList sends an A query for the autopath name of base in ns1
// carrying list in the option, as a client that reaches the cluster DNS
// directly can, and returns the reply. It uses TCP, as the node cache
// does: a query with a long option is larger than the 512 bytes CoreDNS
// reads from a UDP packet.
func exchangeWithList(t *testing.T, addr, base string, list []string) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(base+".search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: 65534, Data: []byte(strings.Join(list, ","))}}
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s: %v", m.Question[0].Name, err)
	}
	return r
}

// metricSum adds up a counter over all its label values in the default
// registry (the server label is CoreDNS's name for the listener).
func metricSum(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestUpstreamFanOutDuplicates: one query whose option repeats one domain
// 32 times used to send 32 identical queries upstream at once. Now every
// distinct candidate is asked exactly once: the search candidate and the
// bare name.
func TestUpstreamFanOutDuplicates(t *testing.T) {
	up := startCountingUpstream(t)
	addr := startForwarding(t, "", up.addr)
	var list []string
	for range 32 {
		list = append(list, "corp.example")
	}
	if r := exchangeWithList(t, addr, "x", list); r.Rcode != dns.RcodeNameError {
		t.Fatalf("reply %v, want NXDOMAIN", r)
	}
	seen, total := up.counts()
	if want := map[string]int{"x.corp.example.": 1, "x.": 1}; total != 2 || !maps.Equal(seen, want) {
		t.Errorf("upstream asked %v (%d queries), want %v", seen, total, want)
	}
}

// TestUpstreamFanOutBound: 100 queries, each with 32 distinct domains
// outside the cluster domain, used to cost 3,300 upstream queries. Now each
// costs at most the bound plus the bare name, and every cut is counted.
func TestUpstreamFanOutBound(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block string
		bound int
	}{
		{"default", "", DefaultMaxForwarded},
		{"max_forwarded 2", "        max_forwarded 2", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := startCountingUpstream(t)
			addr := startForwarding(t, tt.block, up.addr)
			const queries = 100
			before := metricSum(t, "coredns_searchexpand_max_forwarded_exceeded_total")
			for q := range queries {
				var list []string
				for i := range 32 {
					list = append(list, fmt.Sprintf("d%d.q%d.example", i, q))
				}
				if r := exchangeWithList(t, addr, "x", list); r.Rcode != dns.RcodeNameError {
					t.Fatalf("query %d: reply %v, want NXDOMAIN", q, r)
				}
			}
			seen, total := up.counts()
			if total > queries*(tt.bound+1) {
				t.Errorf("%d upstream queries for %d queries, want at most %d", total, queries, queries*(tt.bound+1))
			}
			// Exactly the first bound domains of each list and the bare
			// name (asked once per query).
			if seen["x."] != queries || total != queries*(tt.bound+1) {
				t.Errorf("%d upstream queries, %d for the bare name; want %d and %d", total, seen["x."], queries*(tt.bound+1), queries)
			}
			for q := range queries {
				for i := range 32 {
					name := fmt.Sprintf("x.d%d.q%d.example.", i, q)
					if want := 0; i < tt.bound {
						want = 1
						if seen[name] != want {
							t.Fatalf("%s asked %d times, want %d", name, seen[name], want)
						}
					} else if seen[name] != want {
						t.Fatalf("%s asked %d times, want %d (past the bound)", name, seen[name], want)
					}
				}
			}
			if after := metricSum(t, "coredns_searchexpand_max_forwarded_exceeded_total"); after-before != queries {
				t.Errorf("max_forwarded_exceeded_total went up by %v, want %d", after-before, queries)
			}
		})
	}
}
