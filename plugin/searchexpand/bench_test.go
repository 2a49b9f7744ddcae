package searchexpand

import (
	"context"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/cache"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// BenchmarkServeDNS compares a plain Service lookup answered by the next
// plugin with the same lookup as an autopath name, with the derived list
// and with the node cache's option, for a Service in the pod's namespace
// (the first candidate) and in another one (the second). The next plugin
// answers from a map, standing for a cache hit, so what differs is
// searchexpand's own work.
func BenchmarkServeDNS(b *testing.B) {
	records := map[string][]dns.RR{
		"svc1.ns1.svc.cluster.local.": {rr("svc1.ns1.svc.cluster.local. 5 IN A 10.96.0.11")},
		"svc2.ns2.svc.cluster.local.": {rr("svc2.ns2.svc.cluster.local. 5 IN A 10.96.0.12")},
	}
	next := &fakeNext{records: records}
	s := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	// The same with the answer cache the Corefile enables by default.
	sc := &SearchExpand{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	sc.cache = newAnswerCache(DefaultCacheSize, DefaultCacheMaxTTL)
	// The cache plugin in front of the same next plugin: what a cached
	// answer from searchexpand's answer cache is held against.
	cp := cache.New()
	cp.Next = next
	option := append(searchpath.Derived("ns1", "cluster.local"), "corp.example")
	for _, bc := range []struct {
		name, qname string
		h           plugin.Handler
		option      bool
	}{
		{"plain", "svc1.ns1.svc.cluster.local.", next, false},
		{"cache-plugin-hit", "svc1.ns1.svc.cluster.local.", cp, false},
		// A plain name handed on by searchexpand: what every query that is
		// not an autopath name pays for the plugin.
		{"plain-passthrough", "svc1.ns1.svc.cluster.local.", s, false},
		{"autopath-derived", "svc1.search.ns1.cluster.local.ap.k8s.io.", s, false},
		{"autopath-option", "svc1.search.ns1.cluster.local.ap.k8s.io.", s, true},
		{"autopath-option-cross-namespace", "svc2.ns2.search.ns1.cluster.local.ap.k8s.io.", s, true},
		{"cached-autopath-derived", "svc1.search.ns1.cluster.local.ap.k8s.io.", sc, false},
		{"cached-autopath-option", "svc1.search.ns1.cluster.local.ap.k8s.io.", sc, true},
		{"cached-autopath-option-cross-namespace", "svc2.ns2.search.ns1.cluster.local.ap.k8s.io.", sc, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := new(dns.Msg)
			r.SetQuestion(bc.qname, dns.TypeA)
			if bc.option {
				if err := searchpath.SetOption(r, searchpath.DefaultOptionCode, option); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				rec := dnstest.NewRecorder(&test.ResponseWriter{})
				if _, err := bc.h.ServeDNS(ctx, rec, r); err != nil || rec.Msg == nil || len(rec.Msg.Answer) == 0 {
					b.Fatalf("%v %v", err, rec.Msg)
				}
			}
			// fakeNext records every name it is asked; keep it small.
			next.mu.Lock()
			next.seen = next.seen[:0]
			next.mu.Unlock()
		})
	}
}

// BenchmarkPrune is the cost prune adds to every expansion (deduplicating
// the list and bounding the forwarded domains) for the node cache's usual
// list and for the worst an option can hold: 32 distinct external domains.
// The list is copied back each time, as prune works in place.
func BenchmarkPrune(b *testing.B) {
	s := &SearchExpand{ClusterDomain: "cluster.local"}
	var long, adversarial []string
	for i := range searchpath.MaxEntries {
		suffix := string(rune('a'+i%26)) + string(rune('a'+i/26))
		long = append(long, "d"+suffix+".corp.example")
		adversarial = append(adversarial, strings.Repeat("a", 60)+"."+suffix)
	}
	for _, bc := range []struct {
		name string
		list []string
	}{
		{"node-cache-list", append(searchpath.Derived("ns1", "cluster.local"), "corp.example")},
		{"32-external", long},
		// The most comparison work an option allows: 32 entries of the
		// same length that differ only at the end, 2047 bytes in all.
		{"32-adversarial", adversarial},
	} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]string, len(bc.list))
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, bc.list)
				_, _ = s.prune("svc1", buf)
			}
		})
	}
}
