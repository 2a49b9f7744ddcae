// Package searchexpand is the cluster DNS's autopath expansion plugin: for a
// query name <base>.search.<ns>.<cluster-domain>.ap.k8s.io. it takes the
// search list from the EDNS0 option the node cache attached (see
// plugin/pkg/searchpath), or derives <ns>.svc.<cd>, svc.<cd>, <cd> when there
// is none, resolves the candidates through the rest of the plugin chain
// (cluster names one by one, then forwarded names concurrently if those
// miss), and answers the original name with a CNAME to the first
// candidate in search order that exists, followed by its records.
//
// The work per query is bounded: the option holds at most 32 entries,
// duplicates are asked once, and at most MaxForwarded search domains whose
// candidates leave the cluster domain (each an upstream query) are tried,
// plus the bare name.
package searchexpand

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
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

// DefaultMaxForwarded is the number of forwarded search domains tried per
// query when MaxForwarded is 0. glibc up to 2.25 (and Kubernetes before
// ExpandedDNSConfig) honoured at most 6 search domains in all, so every
// host search list that worked under those limits is tried in full, while
// one query can cost at most 7 upstream queries (6 and the bare name)
// instead of 33.
const DefaultMaxForwarded = 6

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
	// TrustNone rejects the option from every client (the Corefile's
	// `trusted none`), for a cluster DNS with no node cache in front: no
	// one has a reason to send it.
	TrustNone bool
	// MaxForwarded bounds the search domains tried per query whose
	// candidate is outside the cluster domain, so forwarded upstream; the
	// later ones are dropped from the list. The bare name is tried on top.
	// 0 means DefaultMaxForwarded.
	MaxForwarded int
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
	if !searchpath.InZone(searchpath.Zone, q.Name) {
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
	// Forwarded candidates still running when the answer is found are
	// cancelled (see resolveTogether); wait for them so that none outlives
	// the request and its ResponseWriter.
	var wg sync.WaitGroup
	defer wg.Wait()
	found, res, anyFailed, tried := s.resolve(ctx, &wg, w, r, q, n.Base, list)
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
			Target: searchpath.Candidate(n.Base, list, found),
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
// from a trusted client, pruned, and the derived list otherwise (which has
// no repeats and no domain outside the cluster domain, so nothing to
// prune).
func (s *SearchExpand) searchList(server string, w dns.ResponseWriter, r *dns.Msg, n searchpath.Name) []string {
	list, found, err := searchpath.GetOption(r, s.Code)
	switch {
	case !found:
	case !s.trusted(w):
		rejectedCount.WithLabelValues(server, "untrusted").Inc()
	case err != nil:
		rejectedCount.WithLabelValues(server, "invalid").Inc()
	default:
		// Decode split the option's value into a new slice: prune may
		// work in place.
		return s.prune(server, n.Base, list)
	}
	return searchpath.Derived(n.Namespace, n.ClusterDomain)
}

// prune returns the list the expansion works with, built in place in
// list: later
// duplicates dropped, and of the search domains whose candidate is outside
// the cluster domain only the first MaxForwarded kept. A client that
// reaches the cluster DNS directly, or a node with a long host search
// list, could otherwise make one query cost up to 33 upstream queries, all
// sent at once. Cluster candidates are answered from memory and are never
// dropped. Dropping keeps search order, so the answer is the one the
// shorter list would give.
//
// The bare name is not bounded: it is always tried last. It never equals a
// search candidate (those are the base plus at least one more label), so it
// is asked once.
func (s *SearchExpand) prune(server, base string, list []string) []string {
	list = searchpath.Dedupe(list)
	limit := s.MaxForwarded
	if limit <= 0 {
		limit = DefaultMaxForwarded
	}
	kept, forwarded := list[:0], 0
	for _, e := range list {
		if !searchpath.CandidateInZone(s.ClusterDomain, base, e) {
			forwarded++
			if forwarded > limit {
				continue
			}
		}
		kept = append(kept, e)
	}
	if forwarded > limit {
		maxForwardedCount.WithLabelValues(server).Inc()
	}
	return kept
}

// trusted reports whether the client may choose the search list.
func (s *SearchExpand) trusted(w dns.ResponseWriter) bool {
	if s.TrustNone {
		return false
	}
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
// its result, whether an earlier candidate failed, and how many candidates
// were asked.
//
// Candidates inside the cluster domain are answered from memory (kubernetes
// or cache below), in microseconds: they are asked one at a time in the
// request's goroutine, stopping at the first that exists. A goroutine per
// candidate cost more than the lookups (dnsperf: 0.4 of a plain lookup's
// QPS) and asked names that were then thrown away. The others (host search
// domains, the bare name) are forwarded upstream, where each costs a round
// trip: once every candidate before the first of them has missed, they are
// all asked together, so an external name costs one upstream round trip
// instead of one per search domain. Asking them before the cluster
// candidates missed would send upstream queries for every cluster lookup,
// which a ClusterFirst resolver never sends when a cluster name exists.
func (s *SearchExpand) resolve(ctx context.Context, wg *sync.WaitGroup, w dns.ResponseWriter, r *dns.Msg, q dns.Question, base string, list []string) (found int, res result, anyFailed bool, tried int) {
	// Compared without the root label, so that nothing is allocated per query.
	zone := strings.TrimSuffix(s.ClusterDomain, ".")
	for i := range len(list) + 1 {
		name := searchpath.Candidate(base, list, i)
		if !searchpath.InZone(zone, strings.TrimSuffix(name, ".")) {
			found, res, failed, n := s.resolveTogether(ctx, wg, w, r, q, base, list, i)
			return found, res, anyFailed || failed, tried + n
		}
		tried++
		res := s.lookup(ctx, w, s.subRequest(r, q, name, false))
		if res.exists() {
			return i, res, anyFailed, tried
		}
		anyFailed = anyFailed || res.failed
	}
	return -1, result{}, anyFailed, tried
}

// resolveTogether asks the candidates from the one at index from on
// concurrently and returns the first, in search order, that exists, as
// resolve does. The ones still running when it returns are cancelled.
func (s *SearchExpand) resolveTogether(ctx context.Context, wg *sync.WaitGroup, w dns.ResponseWriter, r *dns.Msg, q dns.Question, base string, list []string, from int) (found int, res result, anyFailed bool, tried int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan result, len(list)+1-from)
	for i := range results {
		ch := make(chan result, 1)
		results[i] = ch
		sub := s.subRequest(r, q, searchpath.Candidate(base, list, from+i), true)
		wg.Go(func() { ch <- s.lookup(ctx, w, sub) })
	}
	for i, ch := range results {
		res := <-ch
		if res.exists() {
			return from + i, res, anyFailed, len(results)
		}
		anyFailed = anyFailed || res.failed
	}
	return -1, result{}, anyFailed, len(results)
}

// subRequest is a fresh query for name with the question type and class,
// header flags and EDNS0 settings of r, without the search list option.
//
// A cluster candidate (forwarded false) is answered from memory into a
// nonwriter, so the UDP size means nothing for it: it gets an OPT record
// only when the DO bit or other options must reach the plugins below.
// Without one, the plugins below skip their EDNS0 work. A forwarded
// candidate keeps the client's UDP size so that the upstream does not
// truncate.
func (s *SearchExpand) subRequest(r *dns.Msg, q dns.Question, name string, forwarded bool) *dns.Msg {
	sub := new(dns.Msg)
	sub.Id = r.Id
	sub.RecursionDesired = r.RecursionDesired
	sub.CheckingDisabled = r.CheckingDisabled
	sub.AuthenticatedData = r.AuthenticatedData
	sub.Question = []dns.Question{{Name: name, Qtype: q.Qtype, Qclass: q.Qclass}}
	opt := r.IsEdns0()
	if opt == nil {
		return sub
	}
	var options []dns.EDNS0
	for _, e := range opt.Option {
		if l, ok := e.(*dns.EDNS0_LOCAL); ok && l.Code == s.Code {
			continue
		}
		options = append(options, e)
	}
	if !forwarded && !opt.Do() && len(options) == 0 {
		return sub
	}
	o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}, Option: options}
	o.SetUDPSize(opt.UDPSize())
	o.SetDo(opt.Do())
	sub.Extra = []dns.RR{o}
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
