// Package searchexpand is the cluster DNS's autopath expansion plugin: for a
// query name <base>.search.<ns>.<cluster-domain>.ap.k8s.io. it takes the
// search list from the EDNS0 option the node cache attached (see
// plugin/pkg/searchpath), or derives <ns>.svc.<cd>, svc.<cd>, <cd> when there
// is none, resolves the candidates through the rest of the plugin chain
// (concurrently: cluster names first, forwarded names only if those miss),
// and answers the original name with a CNAME to the first
// candidate in search order that exists, followed by its records.
package searchexpand

import (
	"context"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/plugin/pkg/nonwriter"
	"github.com/coredns/coredns/request"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
	"github.com/miekg/dns"
)

const pluginName = "searchexpand"

// defaultTTL is the CNAME's TTL when the found name has no records (NODATA).
const defaultTTL = 5

// SearchExpand is the plugin handler.
type SearchExpand struct {
	Next plugin.Handler

	// ClusterDomain is the cluster domain, without a trailing dot.
	ClusterDomain string
	// Code is the EDNS0 local option code carrying the search list.
	Code uint16
	// Trusted, when not empty, are the only client prefixes the option is
	// accepted from; others get the derived list.
	Trusted []netip.Prefix
}

// Name implements plugin.Handler.
func (s *SearchExpand) Name() string { return pluginName }

// result is what the rest of the chain said about one candidate.
type result struct {
	msg    *dns.Msg // nil when nothing was written
	failed bool     // SERVFAIL, REFUSED, an error or no reply
}

// exists reports whether the candidate name exists: NOERROR, with answers
// or without (NODATA: the name exists, not the type).
func (r result) exists() bool {
	return !r.failed && r.msg != nil && r.msg.Rcode == dns.RcodeSuccess
}

// ServeDNS implements plugin.Handler.
func (s *SearchExpand) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if len(r.Question) != 1 || r.Opcode != dns.OpcodeQuery {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	q := r.Question[0]
	if !dns.IsSubDomain(searchpath.Zone, q.Name) {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	n, ok := searchpath.Parse(q.Name, s.ClusterDomain)
	if !ok {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}

	server := metrics.WithServer(ctx)
	start := time.Now()
	defer func() { duration.WithLabelValues(server).Observe(time.Since(start).Seconds()) }()
	expansionsCount.WithLabelValues(server).Inc()

	list := s.searchList(server, w, r, n)
	cands := searchpath.Candidates(n.Base, list)

	// The candidates after the found one are not needed: cancel them once
	// the answer is written, and wait for them so that none outlives the
	// request (and its ResponseWriter).
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer wg.Wait()
	defer cancel()
	found, res, anyFailed, tried := s.resolve(ctx, &wg, w, r, q, cands)
	candidatesCount.WithLabelValues(server).Add(float64(tried))

	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = false
	m.RecursionAvailable = true
	switch {
	case found >= 0:
		hitsCount.WithLabelValues(server, strconv.Itoa(found)).Inc()
		ttl := uint32(defaultTTL)
		for i, rr := range res.msg.Answer {
			if i == 0 || rr.Header().Ttl < ttl {
				ttl = rr.Header().Ttl
			}
		}
		m.Answer = make([]dns.RR, 0, 1+len(res.msg.Answer))
		m.Answer = append(m.Answer, &dns.CNAME{
			Hdr:    dns.RR_Header{Name: q.Name, Rrtype: dns.TypeCNAME, Class: q.Qclass, Ttl: ttl},
			Target: cands[found],
		})
		m.Answer = append(m.Answer, res.msg.Answer...)
	case anyFailed:
		// Some candidate could not be resolved: NXDOMAIN could be wrong.
		m.Rcode = dns.RcodeServerFailure
	default:
		m.Rcode = dns.RcodeNameError
	}
	if err := w.WriteMsg(m); err != nil {
		return dns.RcodeServerFailure, plugin.Error(pluginName, err)
	}
	if !plugin.ClientWrite(m.Rcode) {
		// The reply is written: a SERVFAIL return code would make the
		// server write a second one.
		return dns.RcodeSuccess, nil
	}
	return m.Rcode, nil
}

// searchList returns the list from the option when it is present, valid and
// from a trusted client, and the derived list otherwise.
func (s *SearchExpand) searchList(server string, w dns.ResponseWriter, r *dns.Msg, n searchpath.Name) []string {
	list, found, err := searchpath.GetOption(r, s.Code)
	switch {
	case !found:
	case !s.trusted(w):
		rejectedCount.WithLabelValues(server, "untrusted").Inc()
	case err != nil:
		rejectedCount.WithLabelValues(server, "invalid").Inc()
	default:
		return list
	}
	return searchpath.Derived(n.Namespace, n.ClusterDomain)
}

// trusted reports whether the client may choose the search list.
func (s *SearchExpand) trusted(w dns.ResponseWriter) bool {
	if len(s.Trusted) == 0 {
		return true
	}
	state := request.Request{W: w}
	addr, err := netip.ParseAddr(state.IP())
	if err != nil {
		return false
	}
	addr = addr.Unmap().WithZone("")
	for _, p := range s.Trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// resolve resolves the candidates through the next plugin and returns the
// index of the first one, in search order, that exists (-1 if none) with
// its result, and whether an earlier candidate failed.
//
// Candidates inside the cluster domain are answered from memory, so all of
// them start at once. The others (host search paths, the bare name) are
// forwarded upstream: they start, together, only once every candidate
// before the first of them has missed. Starting them with the cluster ones
// would send a query upstream for every cluster lookup — the fan-out
// autopath exists to remove — while a ClusterFirst resolver never sends
// those queries when a cluster name exists.
func (s *SearchExpand) resolve(ctx context.Context, wg *sync.WaitGroup, w dns.ResponseWriter, r *dns.Msg, q dns.Question, cands []string) (found int, res result, anyFailed bool, tried int) {
	results := make([]chan result, len(cands))
	start := func(i int) {
		results[i] = make(chan result, 1)
		sub := s.subRequest(r, q, cands[i])
		ch := results[i]
		tried++
		wg.Go(func() { ch <- s.lookup(ctx, w, sub) })
	}
	zone := dns.Fqdn(s.ClusterDomain)
	for i, name := range cands {
		if dns.IsSubDomain(zone, name) {
			start(i)
		}
	}
	for i := range cands {
		if results[i] == nil {
			// The first forwarded candidate: every earlier one missed.
			for j := i; j < len(cands); j++ {
				if results[j] == nil {
					start(j)
				}
			}
		}
		res := <-results[i]
		if res.exists() {
			return i, res, anyFailed, tried
		}
		anyFailed = anyFailed || res.failed
	}
	return -1, result{}, anyFailed, tried
}

// subRequest is a fresh query for name with the question type and class,
// header flags and EDNS0 settings of r, without the search list option.
func (s *SearchExpand) subRequest(r *dns.Msg, q dns.Question, name string) *dns.Msg {
	sub := new(dns.Msg)
	sub.Id = r.Id
	sub.RecursionDesired = r.RecursionDesired
	sub.CheckingDisabled = r.CheckingDisabled
	sub.AuthenticatedData = r.AuthenticatedData
	sub.Question = []dns.Question{{Name: name, Qtype: q.Qtype, Qclass: q.Qclass}}
	if opt := r.IsEdns0(); opt != nil {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(opt.UDPSize())
		o.SetDo(opt.Do())
		for _, e := range opt.Option {
			if l, ok := e.(*dns.EDNS0_LOCAL); ok && l.Code == s.Code {
				continue
			}
			o.Option = append(o.Option, e)
		}
		sub.Extra = []dns.RR{o}
	}
	return sub
}

// lookup runs one candidate query through the rest of the chain, keeping
// the reply instead of writing it.
func (s *SearchExpand) lookup(ctx context.Context, w dns.ResponseWriter, sub *dns.Msg) result {
	nw := nonwriter.New(w)
	_, err := plugin.NextOrFailure(s.Name(), s.Next, ctx, nw, sub)
	if err != nil || nw.Msg == nil {
		return result{failed: true}
	}
	switch nw.Msg.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
		return result{msg: nw.Msg}
	}
	return result{msg: nw.Msg, failed: true}
}
