package searchexpand

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/testkit"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// bigName has 60 A records at the stub nameserver.
const bigName = "big.fwd.test."

// startStubNameserver is a UDP and TCP nameserver on 127.0.0.1 for a
// private zone: an A record (ip) for each of names, NXDOMAIN for the rest,
// counting the queries it answers.
func startStubNameserver(t *testing.T, ip string, names ...string) (string, *atomic.Int64) {
	t.Helper()
	var queries atomic.Int64
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		queries.Add(1)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		q := r.Question[0]
		switch {
		case !slices.Contains(names, strings.ToLower(q.Name)):
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA && strings.EqualFold(q.Name, bigName):
			// More than fits in 512 bytes.
			for i := range 60 {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, byte(i+1))})
			}
		case q.Qtype == dns.TypeA:
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.ParseIP(ip)}}
		}
		_ = w.WriteMsg(m)
	})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: l, Handler: h}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go func() { _ = s.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return pc.LocalAddr().String(), &queries
}

// TestCandidatesInStubDomains is issue 18's autopath half: the cluster DNS
// has a server block for a stub domain (the DNS resource's forward plugin
// for fwd.test) next to the `.` block with searchexpand. A candidate in
// that domain — the bare name, or a host search domain — must be answered
// by the stub domain's nameserver, as a ClusterFirst pod asking the
// cluster DNS for www.fwd.test is. Candidates used to go to the `.` block's
// chain only, where they got its answer (here file's NXDOMAIN; in a
// cluster the upstream resolvers', leaking the private name).
func TestCandidatesInStubDomains(t *testing.T) {
	addDirective(t)
	caddy.Quiet = true
	dnsserver.Quiet = true
	stub, stubQueries := startStubNameserver(t, "192.0.2.77", "www.fwd.test.", "api.fwd.test.", bigName)
	zone := filepath.Join(t.TempDir(), "root.zone")
	if err := os.WriteFile(zone, []byte(rootZone), 0o600); err != nil {
		t.Fatal(err)
	}
	// One port for both blocks, as the operator renders them.
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	input := fmt.Sprintf(`fwd.test:%[1]d {
    bind 127.0.0.1
    forward . %[2]s {
        prefer_udp
    }
}

.:%[1]d {
    bind 127.0.0.1
    searchexpand cluster.local {
        host_search corp.test fwd.test
    }
    file %[3]s .
}
`, port, stub, zone)
	inst, err := caddy.Start(corefile(input))
	if err != nil {
		t.Fatalf("starting CoreDNS: %v\n%s", err, input)
	}
	t.Cleanup(func() { _ = inst.Stop() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)

	tests := []struct {
		name   string
		qname  string
		list   []string // the node cache's option; nil: none (host_search applies)
		target string   // "" for NXDOMAIN
		ip     string
	}{
		{"bare name in the stub domain", "www.fwd.test.search.ns1.cluster.local.ap.k8s.io.", nil, "www.fwd.test.", "192.0.2.77"},
		{"host search domain from host_search", "www.search.ns1.cluster.local.ap.k8s.io.", nil, "www.fwd.test.", "192.0.2.77"},
		{"host search domain from the option", "api.search.ns1.cluster.local.ap.k8s.io.",
			[]string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "fwd.test"}, "api.fwd.test.", "192.0.2.77"},
		{"cluster name first", "svc1.search.ns1.cluster.local.ap.k8s.io.", nil, "svc1.ns1.svc.cluster.local.", "10.0.0.1"},
		{"in neither", "nope.search.ns1.cluster.local.ap.k8s.io.", nil, "", ""},
	}
	for _, tt := range tests {
		for _, network := range []string{"udp", "tcp"} {
			t.Run(tt.name+"/"+network, func(t *testing.T) {
				m := new(dns.Msg)
				m.SetQuestion(tt.qname, dns.TypeA)
				if tt.list != nil {
					m.SetEdns0(1232, false)
					m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: 65534, Data: []byte(strings.Join(tt.list, ","))}}
				}
				c := &dns.Client{Net: network, Timeout: 5 * time.Second}
				r, _, err := c.Exchange(m, addr)
				if err != nil {
					t.Fatal(err)
				}
				if tt.target == "" {
					if r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 {
						t.Fatalf("reply %v, want NXDOMAIN", r)
					}
					return
				}
				if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 2 {
					t.Fatalf("reply %v, want CNAME %s and its A record", r, tt.target)
				}
				if cn, ok := r.Answer[0].(*dns.CNAME); !ok || cn.Target != tt.target {
					t.Errorf("first answer %v, want CNAME to %s", r.Answer[0], tt.target)
				}
				if a, ok := r.Answer[1].(*dns.A); !ok || a.A.String() != tt.ip {
					t.Errorf("second answer %v, want A %s", r.Answer[1], tt.ip)
				}
			})
		}
	}
	if stubQueries.Load() == 0 {
		t.Error("the stub domain's nameserver saw no query")
	}

	// A candidate whose answer does not fit the client's UDP size: the
	// server cuts the candidate's reply, and the client must be told to
	// retry over TCP, where it gets every record.
	for _, network := range []string{"udp", "tcp"} {
		m := new(dns.Msg)
		m.SetQuestion("big.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
		c := &dns.Client{Net: network, Timeout: 5 * time.Second}
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		switch {
		case network == "udp" && !r.Truncated:
			t.Errorf("udp: %d answers without TC; want TC", len(r.Answer))
		case network == "tcp" && (r.Truncated || len(r.Answer) != 61):
			t.Errorf("tcp: TC %v, %d answers; want the CNAME and 60 A records", r.Truncated, len(r.Answer))
		}
	}

	// A host search domain in ap.k8s.io. is asked of the rest of the
	// chain, never of the server: there it would be expanded again, and
	// each level would fan out.
	before := metricSum(t, "coredns_searchexpand_expansions_total")
	list := []string{"ns1.svc.cluster.local", "search.ns2.cluster.local.ap.k8s.io"}
	if r := exchangeWithList(t, addr, "svc2", list); r.Rcode != dns.RcodeNameError {
		t.Errorf("svc2 with an autopath search domain: %v, want NXDOMAIN", r)
	}
	if got := metricSum(t, "coredns_searchexpand_expansions_total") - before; got != 1 {
		t.Errorf("%v expansions for one query, want 1", got)
	}
}

// BenchmarkForwardedCandidates is what asking the candidates outside the
// cluster domain of the whole server costs over asking the rest of the
// chain: an external name found as the bare name (after three cluster
// candidates and the host search candidate corp.example missed), without
// the answer cache. "server" re-enters a dnsserver.Server whose `.` block
// is searchexpand in front of the same next plugin, so each forwarded
// candidate pays the server's zone lookup, its scrub writer and
// searchexpand's zone check; "chain" is the old path. The next plugin
// answers from a map, so the difference is all overhead: a real candidate
// adds an upstream round trip.
func BenchmarkForwardedCandidates(b *testing.B) {
	next := &fakeNext{records: map[string][]dns.RR{"example.com.": {rr("example.com. 300 IN A 93.184.216.34")}}}
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	cfg := &dnsserver.Config{Zone: ".", Plugin: []plugin.Plugin{func(plugin.Handler) plugin.Handler { return s }}}
	srv, err := dnsserver.NewServer("dns://:53", []*dnsserver.Config{cfg})
	if err != nil {
		b.Fatal(err)
	}
	r := new(dns.Msg)
	r.SetQuestion("example.com.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	if err := searchpath.SetOption(r, searchpath.DefaultOptionCode, append(searchpath.Derived("ns1", "cluster.local"), "corp.example")); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{
		{"chain", context.Background()},
		{"server", context.WithValue(context.Background(), dnsserver.Key{}, srv)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := dnstest.NewRecorder(&test.ResponseWriter{})
				if _, err := s.ServeDNS(bc.ctx, rec, r); err != nil || rec.Msg == nil || len(rec.Msg.Answer) != 2 {
					b.Fatalf("%v %v", err, rec.Msg)
				}
				next.mu.Lock()
				next.seen = next.seen[:0]
				next.mu.Unlock()
			}
		})
	}
}
