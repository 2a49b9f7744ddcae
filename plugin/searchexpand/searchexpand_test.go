package searchexpand

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	ot "github.com/opentracing/opentracing-go"
	"github.com/opentracing/opentracing-go/mocktracer"

	"github.com/dnsplane/dnsplane/internal/testkit"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// fakeNext answers from records (lower-case name -> records of any type):
// the records of the asked type, NODATA when the name has only other types,
// NXDOMAIN when it has none. delay slows the reply for a name.
type fakeNext struct {
	records map[string][]dns.RR
	delay   map[string]time.Duration
	// soa, when set, is the authority section of every negative reply,
	// as the kubernetes plugin and forwarded zones give it.
	soa dns.RR

	mu   sync.Mutex
	seen []string // names asked, in arrival order
	opts int      // sub-requests that carried the search list option
}

func (f *fakeNext) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if len(r.Question) == 0 {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		_ = w.WriteMsg(m)
		return m.Rcode, nil
	}
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	f.mu.Lock()
	f.seen = append(f.seen, name)
	if _, found, _ := searchpath.GetOption(r, searchpath.DefaultOptionCode); found {
		f.opts++
	}
	f.mu.Unlock()
	if d := f.delay[name]; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	m := new(dns.Msg)
	m.SetReply(r)
	rrs, ok := f.records[name]
	if !ok {
		m.Rcode = dns.RcodeNameError
	}
	for _, rr := range rrs {
		if rr.Header().Rrtype == q.Qtype {
			m.Answer = append(m.Answer, dns.Copy(rr))
		}
	}
	if len(m.Answer) == 0 && f.soa != nil {
		m.Ns = []dns.RR{dns.Copy(f.soa)}
	}
	_ = w.WriteMsg(m)
	return m.Rcode, nil
}

func (f *fakeNext) Name() string { return "fake" }

func rr(s string) dns.RR {
	r, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return r
}

var testRecords = map[string][]dns.RR{
	"svc1.ns1.svc.cluster.local.":    {rr("svc1.ns1.svc.cluster.local. 30 IN A 10.0.0.1"), rr("svc1.ns1.svc.cluster.local. 30 IN AAAA fd00::1")},
	"svc1.ns2.svc.cluster.local.":    {rr("svc1.ns2.svc.cluster.local. 30 IN A 10.0.0.2")},
	"app.corp.example.":              {rr("app.corp.example. 60 IN A 192.0.2.10"), rr("app.corp.example. 20 IN A 192.0.2.11")},
	"example.com.":                   {rr("example.com. 300 IN A 93.184.216.34")},
	"txtonly.ns1.svc.cluster.local.": {rr("txtonly.ns1.svc.cluster.local. 30 IN TXT \"x\"")},
}

func TestServeDNS(t *testing.T) {
	const code = searchpath.DefaultOptionCode
	opt := func(v string) *dns.EDNS0_LOCAL { return &dns.EDNS0_LOCAL{Code: code, Data: []byte(v)} }
	hostList := "ns1.svc.cluster.local,svc.cluster.local,cluster.local,corp.example"

	tests := []struct {
		name     string
		qname    string
		qtype    uint16
		option   *dns.EDNS0_LOCAL
		remote   string
		trusted  []netip.Prefix
		rcode    int
		target   string   // CNAME target; "" for none
		ttl      uint32   // CNAME TTL
		records  []string // the records after the CNAME, as strings
		rejected string   // option_rejected_total reason that must go up
		asked    []string // names the next handler must have been asked, in any order; nil to skip
	}{
		{
			name: "same namespace short name at position 0", qname: "svc1.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt(hostList), rcode: dns.RcodeSuccess, target: "svc1.ns1.svc.cluster.local.", ttl: 30,
			records: []string{"svc1.ns1.svc.cluster.local.\t30\tIN\tA\t10.0.0.1"},
		},
		{
			name: "cross namespace via svc.cluster.local", qname: "svc1.ns2.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt(hostList), rcode: dns.RcodeSuccess, target: "svc1.ns2.svc.cluster.local.", ttl: 30,
			records: []string{"svc1.ns2.svc.cluster.local.\t30\tIN\tA\t10.0.0.2"},
		},
		{
			name: "host search path entry from the option", qname: "app.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt(hostList), rcode: dns.RcodeSuccess, target: "app.corp.example.", ttl: 20,
			records: []string{"app.corp.example.\t60\tIN\tA\t192.0.2.10", "app.corp.example.\t20\tIN\tA\t192.0.2.11"},
		},
		{
			name: "bare name last", qname: "example.com.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt(hostList), rcode: dns.RcodeSuccess, target: "example.com.", ttl: 300,
			records: []string{"example.com.\t300\tIN\tA\t93.184.216.34"},
			asked:   []string{"example.com.ns1.svc.cluster.local.", "example.com.svc.cluster.local.", "example.com.cluster.local.", "example.com.corp.example.", "example.com."},
		},
		{
			name: "nonexistent is NXDOMAIN", qname: "nope.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt(hostList), rcode: dns.RcodeNameError,
			asked: []string{"nope.ns1.svc.cluster.local.", "nope.svc.cluster.local.", "nope.cluster.local.", "nope.corp.example.", "nope."},
		},
		{
			name: "option absent uses the derived list", qname: "app.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError,
			asked: []string{"app.ns1.svc.cluster.local.", "app.svc.cluster.local.", "app.cluster.local.", "app."},
		},
		{
			name: "option absent, cluster name found", qname: "svc1.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			rcode: dns.RcodeSuccess, target: "svc1.ns1.svc.cluster.local.", ttl: 30,
			records: []string{"svc1.ns1.svc.cluster.local.\t30\tIN\tA\t10.0.0.1"},
		},
		{
			name: "invalid option uses the derived list", qname: "app.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt("corp.example,,x"), rcode: dns.RcodeNameError, rejected: "invalid",
			asked: []string{"app.ns1.svc.cluster.local.", "app.svc.cluster.local.", "app.cluster.local.", "app."},
		},
		{
			name: "untrusted client uses the derived list", qname: "app.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt(hostList), remote: "192.0.2.99", trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			rcode: dns.RcodeNameError, rejected: "untrusted",
			asked: []string{"app.ns1.svc.cluster.local.", "app.svc.cluster.local.", "app.cluster.local.", "app."},
		},
		{
			name: "trusted client option accepted", qname: "app.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			option: opt(hostList), remote: "10.1.2.3", trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			rcode: dns.RcodeSuccess, target: "app.corp.example.", ttl: 20,
			records: []string{"app.corp.example.\t60\tIN\tA\t192.0.2.10", "app.corp.example.\t20\tIN\tA\t192.0.2.11"},
		},
		{
			name: "AAAA query type preserved", qname: "svc1.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeAAAA,
			option: opt(hostList), rcode: dns.RcodeSuccess, target: "svc1.ns1.svc.cluster.local.", ttl: 30,
			records: []string{"svc1.ns1.svc.cluster.local.\t30\tIN\tAAAA\tfd00::1"},
		},
		{
			name: "NODATA counts as existing", qname: "txtonly.search.ns1.cluster.local.ap.k8s.io.", qtype: dns.TypeA,
			rcode: dns.RcodeSuccess, target: "txtonly.ns1.svc.cluster.local.", ttl: defaultTTL,
		},
		{
			name: "case kept in question, base in target", qname: "SVC1.search.NS1.Cluster.Local.AP.k8s.io.", qtype: dns.TypeA,
			rcode: dns.RcodeSuccess, target: "SVC1.ns1.svc.cluster.local.", ttl: 30,
			records: []string{"svc1.ns1.svc.cluster.local.\t30\tIN\tA\t10.0.0.1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &fakeNext{records: testRecords}
			s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: code, Trusted: tt.trusted}
			r := new(dns.Msg)
			r.SetQuestion(tt.qname, tt.qtype)
			r.Id = 4242
			if tt.option != nil {
				r.SetEdns0(1232, false)
				r.IsEdns0().Option = []dns.EDNS0{tt.option}
			}
			var before float64
			if tt.rejected != "" {
				before = testkit.CounterValue(t, rejectedCount.WithLabelValues("", tt.rejected))
			}
			rec := dnstest.NewRecorder(&test.ResponseWriter{RemoteIP: tt.remote})
			rcode, err := s.ServeDNS(context.Background(), rec, r)
			if err != nil || rcode != tt.rcode {
				t.Fatalf("ServeDNS = %d, %v; want %d", rcode, err, tt.rcode)
			}
			m := rec.Msg
			if m == nil || m.Rcode != tt.rcode {
				t.Fatalf("reply %v, want rcode %d", m, tt.rcode)
			}
			if m.Id != 4242 || !m.Response || !m.RecursionDesired || !m.RecursionAvailable || m.Authoritative {
				t.Errorf("header %+v", m.MsgHdr)
			}
			if len(m.Question) != 1 || m.Question[0].Name != tt.qname || m.Question[0].Qtype != tt.qtype {
				t.Errorf("question %v", m.Question)
			}
			if tt.target == "" {
				if len(m.Answer) != 0 {
					t.Errorf("answers %v, want none", m.Answer)
				}
			} else {
				if len(m.Answer) != 1+len(tt.records) {
					t.Fatalf("answers %v, want CNAME + %d", m.Answer, len(tt.records))
				}
				c, ok := m.Answer[0].(*dns.CNAME)
				if !ok || c.Hdr.Name != tt.qname || c.Target != tt.target || c.Hdr.Ttl != tt.ttl {
					t.Errorf("first answer %v, want CNAME %s -> %s ttl %d", m.Answer[0], tt.qname, tt.target, tt.ttl)
				}
				for i, want := range tt.records {
					if got := m.Answer[1+i].String(); got != want {
						t.Errorf("answer %d = %q, want %q", 1+i, got, want)
					}
				}
			}
			if tt.rejected != "" {
				if after := testkit.CounterValue(t, rejectedCount.WithLabelValues("", tt.rejected)); after != before+1 {
					t.Errorf("option_rejected_total{reason=%q} went from %v to %v", tt.rejected, before, after)
				}
			}
			next.mu.Lock()
			defer next.mu.Unlock()
			if next.opts != 0 {
				t.Errorf("%d sub-requests carried the search list option", next.opts)
			}
			if tt.asked != nil {
				got := map[string]bool{}
				for _, n := range next.seen {
					got[n] = true
				}
				for _, n := range tt.asked {
					if !got[n] {
						t.Errorf("next was not asked %s (asked %v)", n, next.seen)
					}
				}
				if len(next.seen) != len(tt.asked) {
					t.Errorf("next asked %v, want %v", next.seen, tt.asked)
				}
			}
		})
	}
}

// TestServeDNSOrder: when two forwarded candidates exist, the earlier one
// in search order wins even if the later one answers first.
func TestServeDNSOrder(t *testing.T) {
	records := map[string][]dns.RR{
		"db.corp.example.": {rr("db.corp.example. 30 IN A 10.0.0.1")},
		"db.example.net.":  {rr("db.example.net. 30 IN A 10.0.0.9")},
		"db.":              {rr("db. 30 IN A 192.0.2.1")},
	}
	next := &fakeNext{records: records, delay: map[string]time.Duration{"db.corp.example.": 100 * time.Millisecond}}
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	r := new(dns.Msg)
	r.SetQuestion("db.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	if err := searchpath.SetOption(r, searchpath.DefaultOptionCode, append(searchpath.Derived("ns1", "cluster.local"), "corp.example", "example.net")); err != nil {
		t.Fatal(err)
	}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
		t.Fatal(err)
	}
	if c, ok := rec.Msg.Answer[0].(*dns.CNAME); !ok || c.Target != "db.corp.example." {
		t.Fatalf("answer %v, want the CNAME to the first existing candidate, db.corp.example.", rec.Msg.Answer)
	}
}

// TestServeDNSClusterInOrder: cluster candidates are asked one at a time,
// in search order, and the first that exists ends the search: nothing after
// it is asked, not even the other cluster candidates.
func TestServeDNSClusterInOrder(t *testing.T) {
	records := map[string][]dns.RR{
		"db.svc.cluster.local.": {rr("db.svc.cluster.local. 30 IN A 10.0.0.1")},
		"db.cluster.local.":     {rr("db.cluster.local. 30 IN A 10.0.0.9")},
		"db.":                   {rr("db. 30 IN A 192.0.2.1")},
	}
	next := &fakeNext{records: records}
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	r := new(dns.Msg)
	r.SetQuestion("db.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
		t.Fatal(err)
	}
	if c, ok := rec.Msg.Answer[0].(*dns.CNAME); !ok || c.Target != "db.svc.cluster.local." {
		t.Fatalf("answer %v, want the CNAME to db.svc.cluster.local.", rec.Msg.Answer)
	}
	next.mu.Lock()
	defer next.mu.Unlock()
	if want := []string{"db.ns1.svc.cluster.local.", "db.svc.cluster.local."}; !slices.Equal(next.seen, want) {
		t.Errorf("asked %v, want %v", next.seen, want)
	}
}

// barrierNext answers NXDOMAIN for every name, but only once want
// requests are in flight together: a handler that asks one candidate at a
// time never gets past the first and fails the test instead of passing
// slowly.
type barrierNext struct {
	want    int
	mu      sync.Mutex
	seen    []string
	arrived chan struct{}
	release chan struct{}
}

func newBarrierNext(want int) *barrierNext {
	return &barrierNext{want: want, arrived: make(chan struct{}, 64), release: make(chan struct{})}
}

func (b *barrierNext) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	b.mu.Lock()
	b.seen = append(b.seen, strings.ToLower(r.Question[0].Name))
	if len(b.seen) == b.want {
		close(b.release)
	}
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-time.After(10 * time.Second):
		return dns.RcodeServerFailure, errors.New("barrier: the other candidates never arrived")
	case <-ctx.Done():
		return dns.RcodeServerFailure, ctx.Err()
	}
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeNameError)
	_ = w.WriteMsg(m)
	return m.Rcode, nil
}

func (b *barrierNext) Name() string { return "barrier" }

// TestServeDNSConcurrent: the forwarded candidates (host search domains and
// bare name) are in flight together once the cluster ones missed.
func TestServeDNSConcurrent(t *testing.T) {
	for _, tt := range []struct {
		name  string
		list  []string // host search domains in the option; nil: derived list
		phase int      // candidates that must be in flight together
	}{
		{"forwarded candidates", []string{"corp.example", "example.net"}, 3},
		{"bare name alone", nil, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := newBarrierNext(tt.phase)
			// The cluster candidates answer at once; the barrier holds the
			// forwarded ones.
			h := test.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
				if dns.IsSubDomain("cluster.local.", r.Question[0].Name) {
					m := new(dns.Msg)
					m.SetRcode(r, dns.RcodeNameError)
					_ = w.WriteMsg(m)
					return m.Rcode, nil
				}
				return next.ServeDNS(ctx, w, r)
			})
			s := &SearchExpand{Next: h, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
			r := new(dns.Msg)
			r.SetQuestion("x.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
			if tt.list != nil {
				list := append(searchpath.Derived("ns1", "cluster.local"), tt.list...)
				if err := searchpath.SetOption(r, searchpath.DefaultOptionCode, list); err != nil {
					t.Fatal(err)
				}
			}
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
				t.Fatal(err)
			}
			if rec.Msg == nil || rec.Msg.Rcode != dns.RcodeNameError {
				t.Fatalf("reply %v, want NXDOMAIN", rec.Msg)
			}
		})
	}
}

// TestServeDNSForwardedAfterClusterMiss: a cluster name that exists is
// answered without asking any forwarded candidate (no upstream fan-out), and
// forwarded candidates are asked only after every cluster candidate missed.
func TestServeDNSForwardedAfterClusterMiss(t *testing.T) {
	records := map[string][]dns.RR{
		"svc2.ns2.svc.cluster.local.": {rr("svc2.ns2.svc.cluster.local. 30 IN A 10.0.0.2")},
		"intranet.corp.example.":      {rr("intranet.corp.example. 30 IN A 10.9.9.9")},
	}
	list := append(searchpath.Derived("ns1", "cluster.local"), "corp.example")
	for _, tt := range []struct {
		base, found string
		asked       []string // in any order
	}{
		{"svc2.ns2", "svc2.ns2.svc.cluster.local.", []string{
			"svc2.ns2.ns1.svc.cluster.local.", "svc2.ns2.svc.cluster.local."}},
		{"intranet", "intranet.corp.example.", []string{
			"intranet.ns1.svc.cluster.local.", "intranet.svc.cluster.local.", "intranet.cluster.local.",
			"intranet.corp.example.", "intranet."}},
	} {
		t.Run(tt.base, func(t *testing.T) {
			next := &fakeNext{records: records}
			s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
			r := new(dns.Msg)
			r.SetQuestion(tt.base+".search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
			if err := searchpath.SetOption(r, searchpath.DefaultOptionCode, list); err != nil {
				t.Fatal(err)
			}
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
				t.Fatal(err)
			}
			if c, ok := rec.Msg.Answer[0].(*dns.CNAME); !ok || c.Target != tt.found {
				t.Fatalf("answer %v, want CNAME %s", rec.Msg.Answer, tt.found)
			}
			next.mu.Lock()
			defer next.mu.Unlock()
			got := slices.Clone(next.seen)
			slices.Sort(got)
			want := slices.Clone(tt.asked)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("asked %v, want %v", next.seen, tt.asked)
			}
			// Every cluster candidate was asked before any forwarded one.
			lastCluster, firstForwarded := -1, len(next.seen)
			for i, n := range next.seen {
				if dns.IsSubDomain("cluster.local.", n) {
					lastCluster = i
				} else if i < firstForwarded {
					firstForwarded = i
				}
			}
			if lastCluster > firstForwarded {
				t.Errorf("asked %v: a forwarded candidate before a cluster one", next.seen)
			}
		})
	}
}

// TestServeDNSFailure: when no candidate exists and one failed, the answer
// is SERVFAIL, not an NXDOMAIN that might be wrong.
func TestServeDNSFailure(t *testing.T) {
	next := test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeNameError)
		if r.Question[0].Name == "x.svc.cluster.local." {
			return dns.RcodeServerFailure, nil // nothing written
		}
		_ = w.WriteMsg(m)
		return m.Rcode, nil
	})
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	r := new(dns.Msg)
	r.SetQuestion("x.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := s.ServeDNS(context.Background(), rec, r)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Msg == nil || rec.Msg.Rcode != dns.RcodeServerFailure {
		t.Fatalf("reply %v, want SERVFAIL", rec.Msg)
	}
	if !plugin.ClientWrite(rcode) {
		t.Errorf("returned %s after writing the reply: the server would write a second one", dns.RcodeToString[rcode])
	}
}

// TestServeDNSPassThrough: names outside the zone, or not of the autopath
// shape, go to the next plugin unchanged.
func TestServeDNSPassThrough(t *testing.T) {
	for _, qname := range []string{
		"www.example.com.",
		"svc1.ns1.cluster.local.ap.k8s.io.",
		"svc1.search.ns1.other.local.ap.k8s.io.",
		"ap.k8s.io.",
	} {
		t.Run(qname, func(t *testing.T) {
			var got *dns.Msg
			var gotW dns.ResponseWriter
			next := test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
				got, gotW = r, w
				m := new(dns.Msg)
				m.SetReply(r)
				_ = w.WriteMsg(m)
				return dns.RcodeSuccess, nil
			})
			s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
			r := new(dns.Msg)
			r.SetQuestion(qname, dns.TypeA)
			if err := searchpath.SetOption(r, searchpath.DefaultOptionCode, []string{"a.example"}); err != nil {
				t.Fatal(err)
			}
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
				t.Fatal(err)
			}
			if got != r {
				t.Fatalf("next got %v, want the request itself", got)
			}
			// Not wrapped per query (plugin.NextOrFailure's pluginWriter):
			// searchexpand costs names it does not answer nothing.
			if gotW != rec {
				t.Errorf("next got writer %T, want the one searchexpand got", gotW)
			}
			if l, found, _ := searchpath.GetOption(got, searchpath.DefaultOptionCode); !found || len(l) != 1 {
				t.Errorf("option changed: %v %v", l, found)
			}
			if rec.Msg == nil || len(rec.Msg.Answer) != 0 {
				t.Errorf("reply %v", rec.Msg)
			}
		})
	}
}

// TestServeDNSPassThroughTraced: a query with a tracing span reaches the
// next plugin through plugin.NextOrFailure, in a child span named after
// it, as without searchexpand's shortcut for untraced queries.
func TestServeDNSPassThroughTraced(t *testing.T) {
	t.Parallel()
	tracer := mocktracer.New()
	var parent ot.Span
	next := test.NextHandler(dns.RcodeSuccess, nil)
	inner := test.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		if span := ot.SpanFromContext(ctx); span == nil || span == parent {
			t.Errorf("next plugin's span %v, want a child of %v", span, parent)
		}
		return next.ServeDNS(ctx, w, r)
	})
	s := &SearchExpand{Next: inner, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	parent = tracer.StartSpan("server")
	ctx := ot.ContextWithSpan(context.Background(), parent)
	r := new(dns.Msg)
	r.SetQuestion("www.example.com.", dns.TypeA)
	if _, err := s.ServeDNS(ctx, dnstest.NewRecorder(&test.ResponseWriter{}), r); err != nil {
		t.Fatal(err)
	}
	spans := tracer.FinishedSpans()
	if len(spans) != 1 || spans[0].OperationName != inner.Name() {
		t.Errorf("finished spans %v, want one named %q", spans, inner.Name())
	}
}

func TestTrustedIPv6Mapped(t *testing.T) {
	s := &SearchExpand{Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	w := &addrWriter{addr: &net.UDPAddr{IP: net.ParseIP("::ffff:10.1.1.1"), Port: 53}}
	if !s.trusted(w) {
		t.Error("IPv4-mapped address in a trusted IPv4 prefix not trusted")
	}
	w.addr = &net.UDPAddr{IP: net.ParseIP("fd00::1"), Port: 53}
	if s.trusted(w) {
		t.Error("IPv6 address outside the prefixes trusted")
	}
}

type addrWriter struct {
	test.ResponseWriter
	addr net.Addr
}

func (w *addrWriter) RemoteAddr() net.Addr { return w.addr }

func TestName(t *testing.T) {
	if n := (&SearchExpand{}).Name(); n != "searchexpand" {
		t.Errorf("Name() = %q", n)
	}
}

var _ plugin.Handler = (*SearchExpand)(nil)

// FuzzServeDNS: any packet that unpacks goes through ServeDNS without a
// panic, and an expansion's reply keeps the question.
func FuzzServeDNS(f *testing.F) {
	seed := func(qname string, opts ...dns.EDNS0) {
		m := new(dns.Msg)
		m.SetQuestion(qname, dns.TypeA)
		if opts != nil {
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = opts
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	local := func(v string) dns.EDNS0 { return &dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte(v)} }
	seed("svc1.search.ns1.cluster.local.ap.k8s.io.")
	seed("svc1.search.ns1.cluster.local.ap.k8s.io.", local("ns1.svc.cluster.local,svc.cluster.local,cluster.local,corp.example"))
	seed("app.search.ns1.cluster.local.ap.k8s.io.", local("a,,b"))
	seed("search.search.search.cluster.local.ap.k8s.io.", local(""), local("x"))
	seed("www.example.com.")
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, packet []byte) {
		r := new(dns.Msg)
		if err := r.Unpack(packet); err != nil {
			return
		}
		next := &fakeNext{records: testRecords}
		s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
			t.Fatal(err)
		}
		if rec.Msg == nil {
			t.Fatal("no reply")
		}
		if len(r.Question) == 1 && len(rec.Msg.Question) == 1 && rec.Msg.Question[0] != r.Question[0] {
			t.Fatalf("question %v, want %v", rec.Msg.Question[0], r.Question[0])
		}
	})
}

// TestSubRequestEDNS: the search list option never reaches the plugins
// below; a cluster candidate gets an OPT record only for the DO bit or
// other options, a forwarded one keeps the client's UDP size.
func TestSubRequestEDNS(t *testing.T) {
	s := &SearchExpand{ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	cookie := &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"}
	for _, tt := range []struct {
		name      string
		do        bool
		extra     []dns.EDNS0
		forwarded bool
		wantOPT   bool
	}{
		{name: "cluster, only the search list", wantOPT: false},
		{name: "cluster, DO", do: true, wantOPT: true},
		{name: "cluster, a cookie", extra: []dns.EDNS0{cookie}, wantOPT: true},
		{name: "forwarded, only the search list", forwarded: true, wantOPT: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := new(dns.Msg)
			r.SetQuestion("x.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
			r.SetEdns0(1232, tt.do)
			if err := searchpath.SetOption(r, s.Code, searchpath.Derived("ns1", "cluster.local")); err != nil {
				t.Fatal(err)
			}
			r.IsEdns0().Option = append(r.IsEdns0().Option, tt.extra...)
			sub := s.subRequest(r, r.Question[0], "x.ns1.svc.cluster.local.", tt.forwarded)
			opt := sub.IsEdns0()
			if (opt != nil) != tt.wantOPT {
				t.Fatalf("OPT %v, want one: %v", opt, tt.wantOPT)
			}
			if opt == nil {
				return
			}
			if opt.UDPSize() != 1232 || opt.Do() != tt.do || len(opt.Option) != len(tt.extra) {
				t.Errorf("OPT %v: want UDP size 1232, DO %v, options %v", opt, tt.do, tt.extra)
			}
			if _, found, _ := searchpath.GetOption(sub, s.Code); found {
				t.Error("the search list option was passed on")
			}
		})
	}
}

// expand runs one A query for base in ns1 with the given option list (nil:
// no option) through s and returns the reply and the names next was asked,
// sorted.
func expand(t *testing.T, s *SearchExpand, next *fakeNext, base string, list []string) (*dns.Msg, []string) {
	t.Helper()
	r := new(dns.Msg)
	r.SetQuestion(base+".search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	if list != nil {
		// Built by hand: SetOption would not be told about duplicates, and
		// this is what any client can put on the wire.
		r.SetEdns0(1232, false)
		r.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: s.Code, Data: []byte(strings.Join(list, ","))}}
	}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := s.ServeDNS(context.Background(), rec, r); err != nil {
		t.Fatal(err)
	}
	if rec.Msg == nil {
		t.Fatal("no reply")
	}
	next.mu.Lock()
	defer next.mu.Unlock()
	asked := slices.Clone(next.seen)
	slices.Sort(asked)
	next.seen = next.seen[:0]
	return rec.Msg, asked
}

func sorted(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestServeDNSDedupe: a search list with repeated entries (in any case)
// asks every distinct candidate once, the bare name included, and answers
// as the list without the repeats does.
func TestServeDNSDedupe(t *testing.T) {
	records := map[string][]dns.RR{
		"app.corp.example.": {rr("app.corp.example. 30 IN A 192.0.2.10")},
	}
	next := &fakeNext{records: records}
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	list := []string{"ns1.svc.cluster.local", "corp.example", "Corp.Example", "ns1.svc.cluster.local", "corp.example", "CORP.example"}

	m, asked := expand(t, s, next, "nope", list)
	if m.Rcode != dns.RcodeNameError {
		t.Errorf("rcode %s, want NXDOMAIN", dns.RcodeToString[m.Rcode])
	}
	if want := sorted("nope.ns1.svc.cluster.local.", "nope.corp.example.", "nope."); !slices.Equal(asked, want) {
		t.Errorf("asked %v, want each distinct candidate once: %v", asked, want)
	}

	// 32 copies of one domain: one search candidate and the bare name.
	var same []string
	for range searchpath.MaxEntries {
		same = append(same, "corp.example")
	}
	before := testkit.CounterValue(t, hitsCount.WithLabelValues("", "0"))
	m, asked = expand(t, s, next, "app", same)
	if c, ok := m.Answer[0].(*dns.CNAME); !ok || c.Target != "app.corp.example." {
		t.Fatalf("answer %v, want CNAME app.corp.example.", m.Answer)
	}
	if want := sorted("app.corp.example.", "app."); !slices.Equal(asked, want) {
		t.Errorf("asked %v, want %v", asked, want)
	}
	// Positions count in the list without the repeats.
	if after := testkit.CounterValue(t, hitsCount.WithLabelValues("", "0")); after != before+1 {
		t.Errorf("hits_total{position=0} went from %v to %v", before, after)
	}
}

// TestServeDNSMaxForwarded: at most MaxForwarded search domains outside the
// cluster domain are tried, the first ones in search order, plus the bare
// name; cluster domains are never dropped; a found name past the bound is
// not found; the metric counts expansions that were cut.
func TestServeDNSMaxForwarded(t *testing.T) {
	var hosts []string
	for i := range 10 {
		hosts = append(hosts, fmt.Sprintf("h%d.example", i))
	}
	records := map[string][]dns.RR{
		"one.h1.example.":  {rr("one.h1.example. 30 IN A 192.0.2.1")},
		"one.h5.example.":  {rr("one.h5.example. 30 IN A 192.0.2.5")},
		"five.h5.example.": {rr("five.h5.example. 30 IN A 192.0.2.5")},
	}
	derived := searchpath.Derived("ns1", "cluster.local")
	for _, tt := range []struct {
		name  string
		max   int
		list  []string
		base  string
		found string   // CNAME target; "" for NXDOMAIN
		asked []string // every name asked
		cut   bool
	}{
		{
			name: "bound 3", max: 3, list: append(slices.Clone(derived), hosts...), base: "nope",
			asked: []string{"nope.ns1.svc.cluster.local.", "nope.svc.cluster.local.", "nope.cluster.local.",
				"nope.h0.example.", "nope.h1.example.", "nope.h2.example.", "nope."},
			cut: true,
		},
		{
			name: "found before the bound", max: 3, list: append(slices.Clone(derived), hosts...), base: "one", found: "one.h1.example.",
			asked: []string{"one.ns1.svc.cluster.local.", "one.svc.cluster.local.", "one.cluster.local.",
				"one.h0.example.", "one.h1.example.", "one.h2.example.", "one."},
			cut: true,
		},
		{
			name: "found only past the bound is not found", max: 3, list: append(slices.Clone(derived), hosts...), base: "five",
			asked: []string{"five.ns1.svc.cluster.local.", "five.svc.cluster.local.", "five.cluster.local.",
				"five.h0.example.", "five.h1.example.", "five.h2.example.", "five."},
			cut: true,
		},
		{
			name: "cluster domains after forwarded ones are kept", max: 1, list: []string{"h0.example", "h1.example", "ns1.svc.cluster.local", "h2.example"}, base: "nope",
			asked: []string{"nope.h0.example.", "nope.ns1.svc.cluster.local.", "nope."},
			cut:   true,
		},
		{
			name: "duplicates do not use up the bound", max: 2, list: []string{"h0.example", "h0.example", "H0.example", "h1.example"}, base: "nope",
			asked: []string{"nope.h0.example.", "nope.h1.example.", "nope."},
		},
		{
			name: "within the default bound", list: append(slices.Clone(derived), hosts[:DefaultMaxForwarded]...), base: "five", found: "five.h5.example.",
			asked: append([]string{"five.ns1.svc.cluster.local.", "five.svc.cluster.local.", "five.cluster.local.",
				"five.h0.example.", "five.h1.example.", "five.h2.example.", "five.h3.example.", "five.h4.example.", "five.h5.example."}, "five."),
		},
		{
			name: "default bound", list: hosts, base: "nope",
			asked: []string{"nope.h0.example.", "nope.h1.example.", "nope.h2.example.", "nope.h3.example.", "nope.h4.example.", "nope.h5.example.", "nope."},
			cut:   true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := &fakeNext{records: records}
			s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode, MaxForwarded: tt.max}
			before := testkit.CounterValue(t, maxForwardedCount.WithLabelValues(""))
			m, asked := expand(t, s, next, tt.base, tt.list)
			if tt.found == "" {
				if m.Rcode != dns.RcodeNameError {
					t.Errorf("reply %v, want NXDOMAIN", m)
				}
			} else if c, ok := m.Answer[0].(*dns.CNAME); !ok || c.Target != tt.found {
				t.Errorf("answer %v, want CNAME %s", m.Answer, tt.found)
			}
			if want := sorted(tt.asked...); !slices.Equal(asked, want) {
				t.Errorf("asked %v, want %v", asked, want)
			}
			want := before
			if tt.cut {
				want++
			}
			if after := testkit.CounterValue(t, maxForwardedCount.WithLabelValues("")); after != want {
				t.Errorf("max_forwarded_exceeded_total went from %v to %v, want %v", before, after, want)
			}
		})
	}
}

// TestServeDNSTrustNone: with trusted none the option is ignored from every
// client and counted as untrusted.
func TestServeDNSTrustNone(t *testing.T) {
	next := &fakeNext{records: testRecords}
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode, TrustNone: true}
	before := testkit.CounterValue(t, rejectedCount.WithLabelValues("", "untrusted"))
	m, asked := expand(t, s, next, "app", append(searchpath.Derived("ns1", "cluster.local"), "corp.example"))
	if m.Rcode != dns.RcodeNameError {
		t.Errorf("reply %v, want NXDOMAIN: corp.example is not in the derived list", m)
	}
	if want := sorted("app.ns1.svc.cluster.local.", "app.svc.cluster.local.", "app.cluster.local.", "app."); !slices.Equal(asked, want) {
		t.Errorf("asked %v, want the derived list's candidates %v", asked, want)
	}
	if after := testkit.CounterValue(t, rejectedCount.WithLabelValues("", "untrusted")); after != before+1 {
		t.Errorf("option_rejected_total{reason=untrusted} went from %v to %v", before, after)
	}
}

// TestServeDNSHostSearch: a query without a usable option (node cache
// down or bypassed, or musl asking the cluster DNS beside the cache) tries
// the configured host search domains after the derived list, so it gets
// the answer the node cache's option would have given.
func TestServeDNSHostSearch(t *testing.T) {
	next := &fakeNext{records: testRecords}
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode, TrustNone: true,
		HostSearch: []string{"corp.example", "cluster.local"}}
	m, asked := expand(t, s, next, "app", nil)
	want := sorted("app.ns1.svc.cluster.local.", "app.svc.cluster.local.", "app.cluster.local.", "app.corp.example.", "app.")
	if !slices.Equal(asked, want) {
		t.Errorf("asked %v, want the derived list, the host search list (a repeat dropped) and the name: %v", asked, want)
	}
	if m.Rcode != dns.RcodeSuccess || len(m.Answer) == 0 {
		t.Fatalf("reply %v, want the answer under corp.example", m)
	}
	if c, ok := m.Answer[0].(*dns.CNAME); !ok || c.Target != "app.corp.example." {
		t.Errorf("first answer %v, want a CNAME to app.corp.example.", m.Answer[0])
	}
}
