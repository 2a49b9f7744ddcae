// Package loopguard stops forwarding loops while they happen. Each
// instance has a random ID; it appends the ID to an EDNS0 local option
// (the loop marker) of every query it passes on to forward, so that what
// forward sends upstream carries the list of servers the query has
// passed. A query that arrives with the instance's own ID in the marker
// has come back through a loop: it is answered SERVFAIL at once instead of
// being forwarded again. One that has passed MaxHops servers is in a
// chain longer than any sane forwarding setup (or a client claims so): it
// is answered REFUSED. CoreDNS's loop plugin finds a
// loop only with a probe at start and then exits the process; a loop that
// a forwarded zone or a later change of the network creates is not seen,
// and every looping query then holds a socket until the process runs out
// of descriptors (coredns#2391 and the loop plugin's README).
//
// The client sees none of this: the plugin passes a copy of the request
// on, keeps the client's own UDP size and DO bit, never echoes the marker
// and removes the OPT record from a reply to a client that sent none.
package loopguard

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/miekg/dns"
)

const pluginName = "loopguard"

var log = clog.NewWithPlugin(pluginName)

// DefaultCode is the marker's default EDNS0 local option code: the one
// below searchopt's 65534 (plugin/pkg/searchpath), so both fit in a query.
const DefaultCode uint16 = 65533

// DefaultMaxHops is the default hop bound: a query that has passed this
// many servers is refused. A pod's query passes the node cache and the
// cluster DNS, a stub zone may add a resolver or two; 8 leaves room for
// that and stops a loop among servers that do not share an ID (replicas
// behind one Service address, reloads) after 8 hops.
const DefaultMaxHops = 8

// MaxMaxHops bounds the configured hop bound, and with it the marker's
// size (8 bytes per hop).
const MaxMaxHops = 64

// logEvery is the least time between two log lines of one instance: a
// loop makes every query for the looping names fail, and the metrics
// count each of them.
const logEvery = 10 * time.Second

// LoopGuard is the plugin handler.
type LoopGuard struct {
	Next plugin.Handler

	// ID is this instance's identity in the marker; random per instance,
	// so that two servers of one process (the node cache and the cluster
	// DNS of `dnsplane up`) are two hops, not a loop.
	ID ID
	// Code is the marker's EDNS0 local option code.
	Code uint16
	// MaxHops is the hop bound.
	MaxHops int

	// lastLog is when the last refusal was logged (UnixNano), and
	// suppressed how many were not logged since.
	lastLog    atomic.Int64
	suppressed atomic.Int64
}

// Name implements plugin.Handler.
func (g *LoopGuard) Name() string { return pluginName }

// ServeDNS implements plugin.Handler.
func (g *LoopGuard) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	opt := r.IsEdns0()
	marks := ParseMarks(opt, g.Code)
	if marks.Malformed > 0 {
		malformedCount.WithLabelValues(metrics.WithServer(ctx)).Add(float64(marks.Malformed))
	}
	switch {
	case marks.Contains(g.ID):
		loopCount.WithLabelValues(metrics.WithServer(ctx)).Inc()
		return g.fail(w, r, opt, dns.RcodeServerFailure, fmt.Sprintf("forwarding loop: the query came back to this server after %d hops", marks.Hops()))
	case marks.Hops() >= g.MaxHops:
		hopLimitCount.WithLabelValues(metrics.WithServer(ctx)).Inc()
		return g.fail(w, r, opt, dns.RcodeRefused, fmt.Sprintf("forwarding loop: the query has passed %d servers (max_hops %d)", marks.Hops(), g.MaxHops))
	}
	m := newMarked(w, r, opt, g.Code, marks.IDs, g.ID)
	return plugin.NextOrFailure(g.Name(), g.Next, ctx, m, &m.msg)
}

// fail answers r with rcode:
//
//   - SERVFAIL when the query came back: this server cannot answer because
//     of its own configuration (RFC 1035 4.1.1), which is what BIND and
//     Unbound answer when a query exceeds their recursion bounds; a client,
//     or a forward plugin in the loop, moves on as after any server
//     failure. The cache in front keeps it for its servfail TTL, which
//     damps the loop; only a query carrying this server's random ID, which
//     only its upstreams see, gets there.
//   - REFUSED at the hop bound: the marker proves no loop through this
//     server, any client can send a full one, and the cache does not keep
//     REFUSED, so no client can make the server fail a name for others.
//
// The answer is written here and the plugin returns success, as the acl
// plugin does with REFUSED, so that the server does not write a second
// one. An EDNS client also gets an Extended DNS Error (RFC 8914, code 0
// Other) saying why, which dig shows.
func (g *LoopGuard) fail(w dns.ResponseWriter, r *dns.Msg, opt *dns.OPT, rcode int, why string) (int, error) {
	g.logFailure(r, rcode, why)
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	if opt != nil {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(opt.UDPSize())
		o.SetDo(opt.Do())
		o.Option = []dns.EDNS0{&dns.EDNS0_EDE{InfoCode: dns.ExtendedErrorCodeOther, ExtraText: why}}
		m.Extra = []dns.RR{o}
	}
	if err := w.WriteMsg(m); err != nil {
		return dns.RcodeServerFailure, plugin.Error(pluginName, err)
	}
	return dns.RcodeSuccess, nil
}

// logFailure logs a refused query, at most once per logEvery per
// instance, with the number not logged since.
func (g *LoopGuard) logFailure(r *dns.Msg, rcode int, why string) {
	now := time.Now().UnixNano()
	last := g.lastLog.Load()
	if now-last < int64(logEvery) || !g.lastLog.CompareAndSwap(last, now) {
		g.suppressed.Add(1)
		return
	}
	name := ""
	if len(r.Question) > 0 {
		name = r.Question[0].Name
	}
	log.Warningf("%s (query %q, answered %s; %d more since the last such message, counted in coredns_loopguard_*_total): "+
		"a forward plugin or upstream resolver names this server or one that forwards back to it",
		why, name, dns.RcodeToString[rcode], g.suppressed.Swap(0))
}
