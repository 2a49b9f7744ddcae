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
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/plugin/pkg/nonwriter"
	"github.com/coredns/coredns/request"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
	"github.com/miekg/dns"
	ot "github.com/opentracing/opentracing-go"
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
	// HostSearch is appended to the derived list of queries without a
	// usable option: the host search list of the cluster DNS's node, as
	// CoreDNS's autopath appends its own resolv.conf's. A pod whose node
	// cache is down, or whose resolver also asks the cluster DNS directly
	// (musl asks every nameserver at once and takes the first answer),
	// then gets the answer its node cache would give, on nodes with the
	// same host search list (docs/autopath.md).
	HostSearch []string

	// cache keeps finished expansions (cache.go); nil disables it.
	cache *answerCache
	// servers holds the *serverMetrics of each server label (metrics.go).
	servers sync.Map
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
//
// The cluster DNS's `.` block carries searchexpand, so every query passes
// through here, and all but autopath names go straight on (passOn) through
// a frame kept small: miekg/dns serves each UDP query in a new goroutine
// whose stack starts small and is copied to twice its size whenever the
// frames on the path outgrow it, a cost per query of the order of the
// plugin chain's own work. The expansion's locals (1 KiB) live in
// serveAutopath.
func (s *SearchExpand) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if len(r.Question) != 1 || r.Opcode != dns.OpcodeQuery || !searchpath.InZone(searchpath.Zone, r.Question[0].Name) {
		return s.passOn(ctx, w, r)
	}
	return s.serveAutopath(ctx, w, r)
}

// passOn hands a query searchexpand does not answer to the next plugin as
// if searchexpand were not in the chain. plugin.NextOrFailure wraps the
// writer in a new pluginWriter on every call (CoreDNS 1.15, for the
// responding plugin's metrics label) and calls through it on every write:
// a heap allocation and an indirection that every other name paid for
// searchexpand's presence. That wrapper would decide nothing: only the
// one directly around the metrics plugin's recorder sets the label, and
// the writer searchexpand receives is already the previous plugin's
// wrapper (or the server's writer), so the one made here never is. A traced
// query (a span in ctx, the trace plugin) still goes through
// NextOrFailure, for its child span.
func (s *SearchExpand) passOn(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if s.Next == nil || ot.SpanFromContext(ctx) != nil {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	return s.Next.ServeDNS(ctx, w, r)
}

// serveAutopath answers a query for a name in searchpath.Zone.
func (s *SearchExpand) serveAutopath(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	q := r.Question[0]
	start := time.Now()
	state, option, do := s.optionState(w, r)
	// Large enough for a long name and the node cache's usual option
	// without a heap allocation; a longer key grows onto the heap.
	var keyBuf [384]byte
	var key []byte
	var sm *serverMetrics
	if s.cache != nil {
		// Looked up before the name is parsed: only names that parsed
		// are stored, and the key holds the name exactly as asked.
		key = cacheKey(keyBuf[:0], q, do, r.CheckingDisabled, state, option)
		now := start
		if s.cache.now != nil {
			now = s.cache.now()
		}
		if e, ttl := s.cache.get(key, now); e != nil {
			sm = s.metricsFor(metrics.WithServer(ctx))
			defer func() { sm.duration.Observe(time.Since(start).Seconds()) }()
			sm.expansions.Inc()
			sm.cacheHits.Inc()
			s.countList(sm, e.rejected, e.exceeded)
			sm.hit(e.position)
			return s.write(w, e.reply(r, ttl))
		}
	}
	n, ok := searchpath.Parse(q.Name, s.ClusterDomain)
	if !ok {
		return s.passOn(ctx, w, r)
	}
	sm = s.metricsFor(metrics.WithServer(ctx))
	defer func() { sm.duration.Observe(time.Since(start).Seconds()) }()
	sm.expansions.Inc()
	if s.cache != nil {
		sm.cacheMisses.Inc()
	}

	list, rejected, exceeded := s.searchList(state, option, n)
	s.countList(sm, rejected, exceeded)
	// Forwarded candidates still running when the answer is found are
	// cancelled (see resolveTogether); wait for them so that none outlives
	// the request and its ResponseWriter.
	var wg sync.WaitGroup
	defer wg.Wait()
	o := s.resolve(ctx, &wg, w, r, q, n.Base, list)
	sm.candidates.Add(float64(o.tried))
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = false
	m.RecursionAvailable = true
	// cacheTTL is how long the reply may be served from the answer cache.
	var cacheTTL uint32
	switch {
	case o.found >= 0:
		sm.hit(o.found)
		ttl := uint32(defaultTTL)
		for i, rr := range o.res.msg.Answer {
			if i == 0 || rr.Header().Ttl < ttl {
				ttl = rr.Header().Ttl
			}
		}
		cacheTTL = ttl
		if len(o.res.msg.Answer) == 0 {
			// NODATA: the name exists, without the type; keep it no
			// longer than the candidate's negative TTL.
			cacheTTL = min(ttl, negativeTTL(o.res.msg))
		}
		m.Answer = make([]dns.RR, 0, 1+len(o.res.msg.Answer))
		m.Answer = append(m.Answer, &dns.CNAME{
			Hdr:    dns.RR_Header{Name: q.Name, Rrtype: dns.TypeCNAME, Class: q.Qclass, Ttl: ttl},
			Target: searchpath.Candidate(n.Base, list, o.found),
		})
		m.Answer = append(m.Answer, o.res.msg.Answer...)
		if len(o.res.msg.Answer) == 0 {
			// NODATA after the CNAME: the target zone's SOA, as the
			// candidate's reply carries it, bounds the negative TTL
			// (RFC 2308 section 3). Without it the node cache's `cache`
			// takes the reply for an SOA-less NODATA and never keeps it
			// (RFC 2308 section 5), so every AAAA lookup of an IPv4-only
			// name went on to the cluster DNS (docs/autopath.md, "As a
			// pod sees it").
			m.Ns = soaOf(o.res.msg.Ns)
		}
		// The server cut a candidate asked through it (lookupServer) to
		// the client's size: the client must retry over TCP for the rest.
		m.Truncated = o.res.msg.Truncated
	case o.anyFailed:
		// Some candidate could not be resolved: NXDOMAIN could be wrong.
		m.Rcode = dns.RcodeServerFailure
	default:
		m.Rcode = dns.RcodeNameError
		cacheTTL = o.negTTL
		// The asked name is in searchpath.Zone, so that zone's SOA says
		// how long the NXDOMAIN holds: the candidates' smallest negative
		// TTL. Caches (the node cache's included) keep no NXDOMAIN
		// without an SOA (RFC 2308 section 5).
		m.Ns = []dns.RR{zoneSOA(q.Qclass, cacheTTL)}
	}
	// A reply reached past a failed candidate is not cached, found or not:
	// the failed one might exist, and a retry should ask it again. The
	// cache below already keeps each failure briefly (its servfail TTL).
	// Nor a truncated one, which a TCP client would get from the cache.
	if s.cache != nil && !o.anyFailed && !m.Truncated {
		s.store(sm, key, m, o.found, rejected, exceeded, cacheTTL)
	}
	return s.write(w, m)
}

// store adds the expansion's reply to the answer cache.
func (s *SearchExpand) store(sm *serverMetrics, key []byte, m *dns.Msg, found int, rejected string, exceeded bool, ttl uint32) {
	now := time.Now()
	if s.cache.now != nil {
		now = s.cache.now()
	}
	e := &entry{
		stored:   now,
		ttl:      ttl,
		rcode:    m.Rcode,
		position: found,
		rejected: rejected,
		exceeded: exceeded,
	}
	// Copied: plugins above may change the reply after it is written.
	e.answer = copyRRs(m.Answer)
	e.ns = copyRRs(m.Ns)
	stored, evicted := s.cache.add(key, e)
	if evicted {
		cacheEvictions.WithLabelValues(sm.server).Inc()
	}
	if stored {
		cacheEntries.WithLabelValues(sm.server).Set(float64(s.cache.len()))
	}
}

// soaOf returns the SOA records of an authority section.
func soaOf(ns []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range ns {
		if rr.Header().Rrtype == dns.TypeSOA {
			out = append(out, rr)
		}
	}
	return out
}

// zoneSOA is the SOA of searchpath.Zone in a negative answer, with ttl as
// both its TTL and its minimum: a negative cache keeps the answer for the
// smaller of the two (RFC 2308 section 5). The names follow the kubernetes
// plugin's SOA (ns.dns.ZONE, hostmaster.ZONE).
func zoneSOA(class uint16, ttl uint32) *dns.SOA {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: searchpath.Zone, Rrtype: dns.TypeSOA, Class: class, Ttl: ttl},
		Ns:      "ns.dns." + searchpath.Zone,
		Mbox:    "hostmaster." + searchpath.Zone,
		Serial:  1,
		Refresh: 7200,
		Retry:   1800,
		Expire:  86400,
		Minttl:  ttl,
	}
}

// write writes the reply and returns what ServeDNS returns.
func (s *SearchExpand) write(w dns.ResponseWriter, m *dns.Msg) (int, error) {
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

// countList counts what choosing the search list found wrong.
func (s *SearchExpand) countList(sm *serverMetrics, rejected string, exceeded bool) {
	if rejected != "" {
		rejectedCount.WithLabelValues(sm.server, rejected).Inc()
	}
	if exceeded {
		maxForwardedCount.WithLabelValues(sm.server).Inc()
	}
}

// optionState classifies the search list option of r without decoding it,
// and returns the value of the one option when there is exactly one from a
// trusted client, and the DO bit.
func (s *SearchExpand) optionState(w dns.ResponseWriter, r *dns.Msg) (state byte, value []byte, do bool) {
	opt := r.IsEdns0()
	if opt == nil {
		return optionNone, nil, false
	}
	count := 0
	for _, e := range opt.Option {
		if l, ok := e.(*dns.EDNS0_LOCAL); ok && l.Code == s.Code {
			count++
			value = l.Data
		}
	}
	switch {
	case count == 0:
		return optionNone, nil, opt.Do()
	case !s.trusted(w):
		return optionUntrusted, nil, opt.Do()
	case count > 1:
		return optionMultiple, nil, opt.Do()
	}
	return optionOne, value, opt.Do()
}

// searchList returns the list from the option when there is one, valid and
// from a trusted client, pruned, and the derived list otherwise (which has
// no repeats and no domain outside the cluster domain, so nothing to
// prune), with the reason the option was rejected ("" when it was not) and
// whether prune dropped forwarded domains.
func (s *SearchExpand) searchList(state byte, value []byte, n searchpath.Name) (list []string, rejected string, exceeded bool) {
	switch state {
	case optionUntrusted:
		rejected = "untrusted"
	case optionMultiple:
		rejected = "invalid"
	case optionOne:
		list, err := searchpath.Decode(value)
		if err != nil {
			rejected = "invalid"
			break
		}
		// Decode split the option's value into a new slice: prune may
		// work in place.
		list, exceeded = s.prune(n.Base, list)
		return list, "", exceeded
	}
	derived := searchpath.Derived(n.Namespace, n.ClusterDomain)
	if len(s.HostSearch) == 0 {
		return derived, rejected, false
	}
	list, exceeded = s.prune(n.Base, append(derived, s.HostSearch...))
	return list, rejected, exceeded
}

// prune returns the list the expansion works with, built in place in
// list: later
// duplicates dropped, and of the search domains whose candidate is outside
// the cluster domain only the first MaxForwarded kept. A client that
// reaches the cluster DNS directly, or a node with a long host search
// list, could otherwise make one query cost up to 33 upstream queries, all
// sent at once. Cluster candidates are answered from memory and are never
// dropped. Dropping keeps search order, so the answer is the one the
// shorter list would give. exceeded reports that domains were dropped.
//
// The bare name is not bounded: it is always tried last. It never equals a
// search candidate (those are the base plus at least one more label), so it
// is asked once.
func (s *SearchExpand) prune(base string, list []string) (kept []string, exceeded bool) {
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
	return kept, forwarded > limit
}

// trusted reports whether the client may choose the search list.
func (s *SearchExpand) trusted(w dns.ResponseWriter) bool {
	if s.TrustNone {
		return false
	}
	if len(s.Trusted) == 0 {
		return true
	}
	addr, ok := remoteAddr(w)
	if !ok {
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

// remoteAddr is the client's address. The server's writers give a
// *net.UDPAddr or *net.TCPAddr, read without formatting and parsing the
// address as text (request.Request.IP does), which allocated on every
// query with trusted set.
func remoteAddr(w dns.ResponseWriter) (netip.Addr, bool) {
	switch a := w.RemoteAddr().(type) {
	case *net.UDPAddr:
		return netip.AddrFromSlice(a.IP)
	case *net.TCPAddr:
		return netip.AddrFromSlice(a.IP)
	}
	state := request.Request{W: w}
	addr, err := netip.ParseAddr(state.IP())
	return addr, err == nil
}

// outcome is what resolving the candidates found.
type outcome struct {
	found     int    // index of the first candidate that exists, -1 if none
	res       result // its result
	anyFailed bool   // a candidate before it (or any, when none) failed
	tried     int    // candidates asked
	// negTTL is the smallest negative TTL (negativeTTL) of the candidates
	// that did not exist: how long their NXDOMAIN may be kept.
	negTTL uint32
	negAny bool // negTTL is set
}

// missed records a candidate that does not exist.
func (o *outcome) missed(res result) {
	if res.msg == nil {
		return
	}
	if ttl := negativeTTL(res.msg); !o.negAny || ttl < o.negTTL {
		o.negTTL, o.negAny = ttl, true
	}
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
func (s *SearchExpand) resolve(ctx context.Context, wg *sync.WaitGroup, w dns.ResponseWriter, r *dns.Msg, q dns.Question, base string, list []string) outcome {
	o := outcome{found: -1}
	// Compared without the root label, so that nothing is allocated per query.
	zone := strings.TrimSuffix(s.ClusterDomain, ".")
	for i := range len(list) + 1 {
		name := searchpath.Candidate(base, list, i)
		if !searchpath.InZone(zone, strings.TrimSuffix(name, ".")) {
			s.resolveTogether(ctx, wg, w, r, q, base, list, i, &o)
			return o
		}
		o.tried++
		res := s.lookup(ctx, w, s.subRequest(r, q, name, false))
		if res.exists() {
			o.found, o.res = i, res
			return o
		}
		o.anyFailed = o.anyFailed || res.failed
		o.missed(res)
	}
	return o
}

// resolveTogether asks the candidates from the one at index from on
// concurrently and records in o the first, in search order, that exists,
// as resolve does. The ones still running when it returns are cancelled.
// They are outside the cluster domain, so they are asked of the whole
// server (lookupServer): a stub domain's server block answers those in
// its zone.
func (s *SearchExpand) resolveTogether(ctx context.Context, wg *sync.WaitGroup, w dns.ResponseWriter, r *dns.Msg, q dns.Question, base string, list []string, from int, o *outcome) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan result, len(list)+1-from)
	for i := range results {
		ch := make(chan result, 1)
		results[i] = ch
		sub := s.subRequest(r, q, searchpath.Candidate(base, list, from+i), true)
		wg.Go(func() { ch <- s.lookupServer(ctx, w, sub) })
	}
	o.tried += len(results)
	for i, ch := range results {
		res := <-ch
		if res.exists() {
			o.found, o.res = from+i, res
			return
		}
		o.anyFailed = o.anyFailed || res.failed
		o.missed(res)
	}
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
	if err != nil {
		return result{failed: true}
	}
	return classify(nw.Msg)
}

// maxReentry bounds how deep candidate lookups re-enter the server, counted
// in CoreDNS's dnsserver.LoopKey as its file plugin counts CNAME chasing
// (which gives up past 8). searchexpand's own candidates never come back to
// an expansion (lookupServer keeps ap.k8s.io. names on the chain), so only
// another plugin that re-enters the server with an autopath name reaches it.
const maxReentry = 8

// lookupServer runs one candidate query outside the cluster domain
// through the whole server, as CoreDNS's plugin/pkg/upstream does, so that
// the server block with the longest matching zone answers it: a name in a
// stub domain (the DNS resource's forward plugins, docs/dns-operator.md)
// goes to that domain's nameservers, not to this block's forward. Without
// a server in the context (a plugin test), past maxReentry, and for names
// in ap.k8s.io. it stays on the rest of the chain: an autopath name sent
// back to the server would be expanded again, each level fanning out.
//
// A candidate that lands in this block again passes searchexpand at the
// cost of its zone check and is counted by the plugins above it
// (prometheus, log) as a request of its own.
func (s *SearchExpand) lookupServer(ctx context.Context, w dns.ResponseWriter, sub *dns.Msg) result {
	srv, ok := ctx.Value(dnsserver.Key{}).(*dnsserver.Server)
	loop, _ := ctx.Value(dnsserver.LoopKey{}).(int)
	if !ok || loop >= maxReentry || searchpath.InZone(searchpath.Zone, sub.Question[0].Name) {
		return s.lookup(ctx, w, sub)
	}
	if ctx.Err() != nil {
		// The answer was found before this candidate started: asked now,
		// forward would fail it at once, and the errors plugin above us
		// would log that as an upstream error.
		return result{failed: true}
	}
	nw := nonwriter.New(w)
	// The server writes every reply it makes, SERVFAIL included; it
	// returns nothing.
	srv.ServeDNS(context.WithValue(ctx, dnsserver.LoopKey{}, loop+1), nw, sub)
	return classify(nw.Msg)
}

// classify is what a candidate's reply (nil: none written) says about it.
func classify(m *dns.Msg) result {
	if m == nil {
		return result{failed: true}
	}
	switch m.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
		return result{msg: m}
	}
	return result{msg: m, failed: true}
}
