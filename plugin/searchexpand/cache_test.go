package searchexpand

import (
	"context"
	"strconv"
	"strings"
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

// clock is a settable time for the answer cache.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// cached returns a SearchExpand with an answer cache on a test clock,
// answering from next.
func cached(next *fakeNext, size int, maxTTL time.Duration) (*SearchExpand, *clock) {
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	s.cache = newAnswerCache(size, maxTTL)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s.cache.now = c.now
	return s, c
}

// query sends one question with the given id, option value (nil: none) and
// DO bit through h.
func query(t *testing.T, h *SearchExpand, id uint16, name string, qtype uint16, option []string, do bool) *dns.Msg {
	t.Helper()
	r := new(dns.Msg)
	r.SetQuestion(name, qtype)
	r.Id = id
	if option != nil || do {
		r.SetEdns0(1232, do)
	}
	if option != nil {
		r.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: h.Code, Data: []byte(strings.Join(option, ","))}}
	}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := h.ServeDNS(context.Background(), rec, r); err != nil {
		t.Fatal(err)
	}
	if rec.Msg == nil {
		t.Fatal("no reply")
	}
	return rec.Msg
}

func (f *fakeNext) asked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.seen)
	f.seen = f.seen[:0]
	return n
}

// TestCacheSameAnswer: a cached reply is the uncached reply with the
// request's ID and every TTL set to the time left, for found names, names
// without the type (NODATA), and nonexistent ones.
func TestCacheSameAnswer(t *testing.T) {
	host := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}
	tests := []struct {
		name    string
		qname   string
		qtype   uint16
		option  []string
		elapsed time.Duration
		wantTTL uint32 // of every answer on the hit
	}{
		{"service short name", "svc1.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, host, 10 * time.Second, 20},
		{"derived list", "svc1.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, nil, 29 * time.Second, 1},
		{"svc.ns", "svc1.ns2.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, host, 0, 30},
		// Two records with TTLs 60 and 20: both are served with the
		// minimum left, as the cache plugin does.
		{"host search domain", "app.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, host, 5 * time.Second, 15},
		{"external", "example.com.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, host, time.Minute, 240},
		{"nodata", "txtonly.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, host, 2 * time.Second, 3},
		{"nxdomain", "nope.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, host, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// fakeNext answers NXDOMAIN without records: the fail-safe 5 s.
			next := &fakeNext{records: testRecords}
			s, clk := cached(next, 100, time.Hour)
			uncached := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
			want := query(t, uncached, 7, tc.qname, tc.qtype, tc.option, false)
			next.asked()

			first := query(t, s, 1, tc.qname, tc.qtype, tc.option, false)
			if next.asked() == 0 {
				t.Fatal("the first query was not expanded")
			}
			want.Id = first.Id
			if first.String() != want.String() {
				t.Fatalf("first reply differs from the uncached one:\n%v\nwant\n%v", first, want)
			}
			clk.t = clk.t.Add(tc.elapsed)
			hit := query(t, s, 2, tc.qname, tc.qtype, tc.option, false)
			if n := next.asked(); n != 0 {
				t.Fatalf("the repeated query asked the chain %d times, want a cache hit", n)
			}
			if hit.Id != 2 {
				t.Errorf("hit has ID %d, want the request's 2", hit.Id)
			}
			for _, rr := range hit.Answer {
				if rr.Header().Ttl != tc.wantTTL {
					t.Errorf("hit TTL %d for %v, want %d", rr.Header().Ttl, rr, tc.wantTTL)
				}
				rr.Header().Ttl = 0
			}
			for _, rr := range want.Answer {
				rr.Header().Ttl = 0
			}
			want.Id = hit.Id
			if hit.String() != want.String() {
				t.Errorf("hit differs from the uncached reply (TTLs aside):\n%v\nwant\n%v", hit, want)
			}
		})
	}
}

// TestCacheKey: everything the expansion depends on separates entries;
// the message ID does not.
func TestCacheKey(t *testing.T) {
	host := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}
	other := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "other.example"}
	const name = "app.search.ns1.cluster.local.ap.k8s.io."
	tests := []struct {
		name     string
		qname    string
		qtype    uint16
		option   []string
		do       bool
		wantMiss bool
	}{
		{"same question, other ID", name, dns.TypeA, host, false, false},
		{"other search list", name, dns.TypeA, other, false, true},
		{"no option", name, dns.TypeA, nil, false, true},
		{"other type", name, dns.TypeAAAA, host, false, true},
		{"DO bit", name, dns.TypeA, host, true, true},
		{"other case", strings.ToUpper(name[:3]) + name[3:], dns.TypeA, host, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next := &fakeNext{records: testRecords}
			s, _ := cached(next, 100, time.Hour)
			query(t, s, 1, name, dns.TypeA, host, false)
			next.asked()
			m := query(t, s, 2, tc.qname, tc.qtype, tc.option, tc.do)
			if miss := next.asked() > 0; miss != tc.wantMiss {
				t.Errorf("miss %v, want %v (reply %v)", miss, tc.wantMiss, m)
			}
		})
	}
}

// TestCacheNotStored: failures, and answers reached past a failed
// candidate, are not kept; neither is an answer with TTL 0.
func TestCacheNotStored(t *testing.T) {
	failing := map[string]bool{"x.ns1.svc.cluster.local.": true}
	next := test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		name := r.Question[0].Name
		if failing[name] {
			return dns.RcodeServerFailure, nil // nothing written
		}
		m := new(dns.Msg)
		m.SetReply(r)
		switch name {
		case "x.svc.cluster.local.":
			m.Answer = []dns.RR{rr("x.svc.cluster.local. 30 IN A 10.0.0.9")}
		case "zero.ns1.svc.cluster.local.":
			m.Answer = []dns.RR{rr("zero.ns1.svc.cluster.local. 0 IN A 10.0.0.10")}
		default:
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
		return m.Rcode, nil
	})
	for _, tc := range []struct {
		name, base string
		rcode      int
	}{
		{"found past a failure", "x", dns.RcodeSuccess},
		{"TTL 0", "zero", dns.RcodeSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
			s.cache = newAnswerCache(100, time.Hour)
			m := query(t, s, 1, tc.base+".search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, nil, false)
			if m.Rcode != tc.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[m.Rcode], dns.RcodeToString[tc.rcode])
			}
			if n := s.cache.len(); n != 0 {
				t.Errorf("%d entries cached, want none", n)
			}
		})
	}
	t.Run("SERVFAIL", func(t *testing.T) {
		failing["y.ns1.svc.cluster.local."] = true
		s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
		s.cache = newAnswerCache(100, time.Hour)
		m := query(t, s, 1, "y.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA, nil, false)
		if m.Rcode != dns.RcodeServerFailure {
			t.Fatalf("rcode %s, want SERVFAIL", dns.RcodeToString[m.Rcode])
		}
		if n := s.cache.len(); n != 0 {
			t.Errorf("%d entries cached, want none", n)
		}
	})
}

// TestCacheTTL: entries expire with their TTL, capped by cache_max_ttl;
// negative answers live as long as the smallest negative TTL among the
// candidates (the SOA's, as the cache plugin takes it).
func TestCacheTTL(t *testing.T) {
	soa := func(zone string, ttl, minttl uint32) dns.RR {
		return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
			Ns: "ns.dns." + zone, Mbox: "hostmaster." + zone, Serial: 1, Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: minttl}
	}
	next := test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetReply(r)
		name := r.Question[0].Name
		switch {
		case name == "long.ns1.svc.cluster.local.":
			m.Answer = []dns.RR{rr("long.ns1.svc.cluster.local. 600 IN A 10.0.0.11")}
		case strings.HasSuffix(name, "cluster.local."):
			m.Rcode = dns.RcodeNameError
			m.Ns = []dns.RR{soa("cluster.local.", 5, 5)}
		default:
			m.Rcode = dns.RcodeNameError
			m.Ns = []dns.RR{soa(".", 3, 900)}
		}
		_ = w.WriteMsg(m)
		return m.Rcode, nil
	})
	tests := []struct {
		name   string
		base   string
		maxTTL time.Duration
		alive  time.Duration // still a hit after this
		gone   time.Duration // a miss after this
	}{
		{"positive", "long", time.Hour, 599 * time.Second, 600 * time.Second},
		{"positive capped", "long", 30 * time.Second, 29 * time.Second, 30 * time.Second},
		// The root's SOA has TTL 3 (minimum 900): 3 s, the smallest.
		{"negative from SOA", "nope", time.Hour, 2 * time.Second, 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			counting := test.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
				calls++
				return next.ServeDNS(ctx, w, r)
			})
			s := &SearchExpand{Next: counting, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
			s.cache = newAnswerCache(100, tc.maxTTL)
			clk := &clock{t: time.Unix(1_700_000_000, 0)}
			s.cache.now = clk.now
			qname := tc.base + ".search.ns1.cluster.local.ap.k8s.io."
			query(t, s, 1, qname, dns.TypeA, nil, false)
			start := clk.t
			clk.t = start.Add(tc.alive)
			calls = 0
			query(t, s, 2, qname, dns.TypeA, nil, false)
			if calls != 0 {
				t.Errorf("after %v: expanded again, want a hit", tc.alive)
			}
			clk.t = start.Add(tc.gone)
			query(t, s, 3, qname, dns.TypeA, nil, false)
			if calls == 0 {
				t.Errorf("after %v: a hit, want the entry expired", tc.gone)
			}
		})
	}
}

// TestCacheMetrics: hits count as the expansion did (expansions, the
// position, rejected options), plus the cache's own counters.
func TestCacheMetrics(t *testing.T) {
	next := &fakeNext{records: testRecords}
	s, _ := cached(next, 100, time.Hour)
	s.TrustNone = true // every option is untrusted
	ctx := serverCtx("dns://:5399")
	r := new(dns.Msg)
	r.SetQuestion("svc1.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	r.SetEdns0(1232, false)
	r.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: s.Code, Data: []byte("corp.example")}}
	for range 3 {
		if _, err := s.ServeDNS(ctx, dnstest.NewRecorder(&test.ResponseWriter{}), r); err != nil {
			t.Fatal(err)
		}
	}
	const server = "dns://:5399"
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"hits", testkit.CounterValue(t, cacheHits.WithLabelValues(server)), 2},
		{"misses", testkit.CounterValue(t, cacheMisses.WithLabelValues(server)), 1},
		{"expansions", testkit.CounterValue(t, expansionsCount.WithLabelValues(server)), 3},
		{"position 0", testkit.CounterValue(t, hitsCount.WithLabelValues(server, "0")), 3},
		{"untrusted", testkit.CounterValue(t, rejectedCount.WithLabelValues(server, "untrusted")), 3},
		{"candidates", testkit.CounterValue(t, candidatesCount.WithLabelValues(server)), 1},
		{"entries", testkit.GaugeValue(t, cacheEntries.WithLabelValues(server)), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestCacheEvictions: the size bound holds and evictions are counted.
func TestCacheEvictions(t *testing.T) {
	next := &fakeNext{records: testRecords}
	// The sharded cache keeps at least 4 entries in each of its 256 shards.
	s, _ := cached(next, 1, time.Hour)
	ctx := serverCtx("dns://:5398")
	const n = 3000
	for i := range n {
		r := new(dns.Msg)
		r.SetQuestion("svc1.search.ns"+strconv.Itoa(i)+".cluster.local.ap.k8s.io.", dns.TypeA)
		if _, err := s.ServeDNS(ctx, dnstest.NewRecorder(&test.ResponseWriter{}), r); err != nil {
			t.Fatal(err)
		}
	}
	if l := s.cache.len(); l > 1024 {
		t.Errorf("%d entries, more than the bound 1024", l)
	}
	ev := testkit.CounterValue(t, cacheEvictions.WithLabelValues("dns://:5398"))
	if ev == 0 || int(ev)+s.cache.len() != n {
		t.Errorf("evictions %v + entries %d, want %d", ev, s.cache.len(), n)
	}
}

// TestSetupCache: cache_size and cache_max_ttl.
func TestSetupCache(t *testing.T) {
	tests := []struct {
		input   string
		wantErr string
		size    int
		maxTTL  time.Duration
	}{
		{"searchexpand", "", DefaultCacheSize, DefaultCacheMaxTTL},
		{"searchexpand {\ncache_size 0\n}", "", 0, DefaultCacheMaxTTL},
		{"searchexpand {\ncache_size 500\ncache_max_ttl 30\n}", "", 500, 30 * time.Second},
		{"searchexpand {\ncache_max_ttl 5m\n}", "", DefaultCacheSize, 5 * time.Minute},
		{"searchexpand {\ncache_size -1\n}", "cache_size", 0, 0},
		{"searchexpand {\ncache_size many\n}", "cache_size", 0, 0},
		{"searchexpand {\ncache_size 10000001\n}", "cache_size", 0, 0},
		{"searchexpand {\ncache_size\n}", "Wrong argument count", 0, 0},
		{"searchexpand {\ncache_max_ttl 0\n}", "cache_max_ttl", 0, 0},
		{"searchexpand {\ncache_max_ttl 1.5s\n}", "cache_max_ttl", 0, 0},
		{"searchexpand {\ncache_max_ttl 25h\n}", "cache_max_ttl", 0, 0},
		{"searchexpand {\ncache_max_ttl soon\n}", "cache_max_ttl", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.input, func(t *testing.T) {
			cfg, err := parse(caddy.NewTestController("dns", tc.input))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.cacheSize != tc.size || cfg.cacheMaxTTL != tc.maxTTL {
				t.Errorf("cache_size %d, cache_max_ttl %v; want %d, %v", cfg.cacheSize, cfg.cacheMaxTTL, tc.size, tc.maxTTL)
			}
		})
	}
}

// serverCtx is the context the server passes to its plugins, which the
// server label is read from. The server has one `.` block answering
// NXDOMAIN for every name: candidates outside the cluster domain are asked
// of the whole server (lookupServer), and a bare dnsserver.Server without
// blocks would refuse them.
func serverCtx(addr string) context.Context {
	cfg := &dnsserver.Config{Zone: ".", Plugin: []plugin.Plugin{func(plugin.Handler) plugin.Handler { return &fakeNext{} }}}
	srv, err := dnsserver.NewServer(addr, []*dnsserver.Config{cfg})
	if err != nil {
		panic(err)
	}
	return context.WithValue(context.Background(), dnsserver.Key{}, srv)
}
