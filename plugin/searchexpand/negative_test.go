package searchexpand

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin/cache"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// TestNegativeAnswersCarrySOA: an autopath NODATA (the CNAME, no record of
// the type) and NXDOMAIN carry an SOA in their authority section, so that
// the node cache's `cache` keeps them (it keeps no negative answer without
// one, RFC 2308 section 5). Before, every AAAA lookup of an IPv4-only
// Service through autopath went past the node cache (docs/autopath.md,
// "As a pod sees it").
func TestNegativeAnswersCarrySOA(t *testing.T) {
	t.Parallel()
	clusterSOA := rr("cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5")
	const (
		ipv4Only = "svc1.search.ns2.cluster.local.ap.k8s.io." // svc1.ns2.svc.cluster.local has an A, no AAAA
		missing  = "nothere.search.ns1.cluster.local.ap.k8s.io."
	)
	cases := []struct {
		name    string
		qname   string
		qtype   uint16
		rcode   int
		wantSOA string // owner of the SOA in the authority section
		wantTTL uint32
	}{
		{"nodata after the CNAME keeps the target zone's SOA", ipv4Only, dns.TypeAAAA, dns.RcodeSuccess, "cluster.local.", 5},
		{"nxdomain gets the autopath zone's SOA", missing, dns.TypeA, dns.RcodeNameError, searchpath.Zone, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next := &fakeNext{records: testRecords, soa: clusterSOA}
			s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
			front := cache.New()
			front.Next = s
			ask := func() *dns.Msg {
				r := new(dns.Msg)
				r.SetQuestion(tc.qname, tc.qtype)
				rec := dnstest.NewRecorder(&test.ResponseWriter{})
				if _, err := front.ServeDNS(context.Background(), rec, r); err != nil {
					t.Fatal(err)
				}
				if rec.Msg == nil {
					t.Fatal("no reply")
				}
				return rec.Msg
			}
			m := ask()
			if m.Rcode != tc.rcode {
				t.Fatalf("rcode %s, want %s:\n%v", dns.RcodeToString[m.Rcode], dns.RcodeToString[tc.rcode], m)
			}
			if len(m.Ns) != 1 || m.Ns[0].Header().Rrtype != dns.TypeSOA || m.Ns[0].Header().Name != tc.wantSOA {
				t.Fatalf("authority %v, want one SOA of %s", m.Ns, tc.wantSOA)
			}
			if soa := m.Ns[0].(*dns.SOA); soa.Hdr.Ttl > tc.wantTTL || soa.Minttl > tc.wantTTL {
				t.Errorf("SOA TTL %d minimum %d, want at most %d", soa.Hdr.Ttl, soa.Minttl, tc.wantTTL)
			}
			asked := next.asked()
			if asked == 0 {
				t.Fatal("the first query reached no candidate")
			}
			// The repeat is the cache's: no candidate is asked again.
			again := ask()
			if again.Rcode != tc.rcode {
				t.Fatalf("repeat rcode %s", dns.RcodeToString[again.Rcode])
			}
			if n := next.asked(); n != 0 {
				t.Errorf("the repeat asked %d candidates: the cache in front did not keep the answer", n)
			}
		})
	}
}
