package searchexpand

import (
	"hash/maphash"
	"time"

	"github.com/coredns/coredns/plugin/pkg/cache"
	"github.com/miekg/dns"
)

// Answer cache defaults (see README.md, "Answer cache").
const (
	// DefaultCacheSize is the number of expansions kept when the Corefile
	// does not say: a few per Service and node-cache search list.
	DefaultCacheSize = 10000
	// DefaultCacheMaxTTL caps how long an expansion is kept, as the cache
	// plugin caps positive answers (1 h). The answer's own TTL is usually
	// much shorter: the kubernetes plugin's is 5 s.
	DefaultCacheMaxTTL = time.Hour
)

// failSafeTTL is what a negative candidate reply without any record (no
// SOA) counts for, the same fail-safe the cache plugin uses for such
// replies (CoreDNS dnsutil.MinimalDefaultTTL).
const failSafeTTL = 5

// answerCache keeps finished expansions, so that a repeated autopath lookup
// costs one map lookup instead of a walk down the search list.
//
// searchexpand must sit above cache (docs/autopath.md): two nodes can send
// different host search lists for the same name, and cache does not key on
// the option. Below it each candidate is cached, but every query still
// redoes the expansion (several chain passes, sub-requests, the CNAME);
// that is where stock autopath, which sits below cache, was faster
// (issue 14). This cache keys on everything the expansion depends on, the
// option's bytes included, so it can never serve one node's answer to
// another.
type answerCache struct {
	items  *cache.Cache[*entry]
	seed   maphash.Seed
	maxTTL uint32 // seconds
	// now replaces the clock in tests; nil is time.Now, read once per
	// query with the duration metric's start (the clock showed in the
	// profile of a hit).
	now func() time.Time
}

// entry is one finished expansion: the reply's rcode and answer section
// (the CNAME and the found records, copied so that plugins above that
// change the reply cannot change the entry) and what it counted in the
// metrics, so that a hit counts the same as the expansion did.
type entry struct {
	key      string
	stored   time.Time
	ttl      uint32 // seconds, from stored
	rcode    int
	answer   []dns.RR
	ns       []dns.RR // the SOA of a NODATA or NXDOMAIN reply
	position int      // hits_total position, -1 for NXDOMAIN
	rejected string   // option_rejected_total reason, "" for none
	exceeded bool     // max_forwarded_exceeded_total
}

func newAnswerCache(size int, maxTTL time.Duration) *answerCache {
	return &answerCache{
		items:  cache.New[*entry](size),
		seed:   maphash.MakeSeed(),
		maxTTL: uint32(maxTTL / time.Second),
	}
}

// get returns the entry for key and its remaining TTL in seconds, or nil
// when there is none or it has expired. Hash collisions are told apart by
// the full key, so a hit is always the same question.
func (c *answerCache) get(key []byte, now time.Time) (*entry, uint32) {
	e, ok := c.items.Get(maphash.Bytes(c.seed, key))
	if !ok || e.key != string(key) {
		return nil, 0
	}
	// Whole seconds elapsed, as the cache plugin decrements.
	left := int64(e.ttl) - int64(now.Sub(e.stored)/time.Second)
	if left <= 0 {
		return nil, 0
	}
	return e, uint32(left)
}

// add stores e under key, capping its TTL, and reports whether another
// entry was evicted to make room. An entry with no TTL left is not stored.
func (c *answerCache) add(key []byte, e *entry) (stored, evicted bool) {
	e.ttl = min(e.ttl, c.maxTTL)
	if e.ttl == 0 {
		return false, false
	}
	e.key = string(key)
	return true, c.items.Add(maphash.Bytes(c.seed, key), e)
}

func (c *answerCache) len() int { return c.items.Len() }

// Option states in the cache key: everything about the option that decides
// the search list without decoding it.
const (
	optionNone      byte = iota // no option: the derived list
	optionUntrusted             // ignored: the derived list, counted untrusted
	optionMultiple              // sent twice: the derived list, counted invalid
	optionOne                   // one option from a trusted client: its bytes follow
)

// cacheKey appends the key for the question to buf: the query name as
// asked (the reply echoes it and the candidates carry its case, so two
// spellings are two entries), type, class, the DO and CD bits (the cache
// plugin keys on both), and the option's state and bytes. The raw bytes
// stand for the list they decode to (deduped and bounded by prune, both
// functions of the bytes and the configuration): a hit then skips decoding.
// Two different encodings of the same list are two entries, which costs
// only memory; node caches send one encoding per node.
//
// miekg/dns keeps names in presentation format, where a zero byte is
// escaped, so the zero separator cannot occur in the name.
func cacheKey(buf []byte, q dns.Question, do, cd bool, state byte, option []byte) []byte {
	buf = append(buf, q.Name...)
	var flags byte
	if do {
		flags |= 1
	}
	if cd {
		flags |= 2
	}
	buf = append(buf, 0, byte(q.Qtype>>8), byte(q.Qtype), byte(q.Qclass>>8), byte(q.Qclass), flags, state)
	if state == optionOne {
		buf = append(buf, option...)
	}
	return buf
}

// negativeTTL is how long a candidate's NXDOMAIN may be trusted, by the
// cache plugin's rule for negative answers: the smallest TTL in the reply
// (an authoritative server sets the SOA's TTL to at most its minimum,
// RFC 2308 section 3), or the fail-safe when the reply has no records.
func negativeTTL(m *dns.Msg) uint32 {
	ttl, seen := uint32(0), false
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			h := rr.Header()
			if h.Rrtype == dns.TypeOPT {
				continue // its TTL field holds flags
			}
			if !seen || h.Ttl < ttl {
				ttl, seen = h.Ttl, true
			}
		}
	}
	if !seen {
		return failSafeTTL
	}
	return ttl
}

// reply builds the answer to r from e, as the expansion wrote it, with every
// TTL set to the time left: what the cache plugin does with a cached reply,
// and what the expansion itself returns when the records come from the
// cache below.
func (e *entry) reply(r *dns.Msg, ttl uint32) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = false
	m.RecursionAvailable = true
	m.Rcode = e.rcode
	m.Answer = withTTL(e.answer, ttl)
	m.Ns = withTTL(e.ns, ttl)
	return m
}

// withTTL copies rrs with every TTL set to ttl; nil for none.
func withTTL(rrs []dns.RR, ttl uint32) []dns.RR {
	if len(rrs) == 0 {
		return nil
	}
	out := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		c := dns.Copy(rr)
		c.Header().Ttl = ttl
		out[i] = c
	}
	return out
}

// copyRRs copies rrs; nil for none.
func copyRRs(rrs []dns.RR) []dns.RR {
	if len(rrs) == 0 {
		return nil
	}
	out := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		out[i] = dns.Copy(rr)
	}
	return out
}
