package loopguard

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/cache"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
)

// BenchmarkCacheHit: a cache hit, the commonest answer, with and without
// loopguard behind cache (its place, right before forward). A hit never
// reaches it, so the two must cost the same; BenchmarkServeDNS is what a
// forwarded query pays.
func BenchmarkCacheHit(b *testing.B) {
	upstream := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		return dns.RcodeSuccess, w.WriteMsg(upstreamReply(r))
	})
	for _, bc := range []struct {
		name  string
		guard bool
		edns  bool
	}{{"cache", false, false}, {"loopguard+cache", true, false}, {"cache EDNS", false, true}, {"loopguard+cache EDNS", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			c := cache.New()
			c.Next = upstream
			if bc.guard {
				c.Next = &LoopGuard{Next: upstream, ID: self, Code: DefaultCode, MaxHops: DefaultMaxHops}
			}
			var h plugin.Handler = c
			r := query(bc.edns, 1232, false)
			w := &test.ResponseWriter{}
			if _, err := h.ServeDNS(context.Background(), w, r); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = h.ServeDNS(context.Background(), w, r)
			}
		})
	}
}
