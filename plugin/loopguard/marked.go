package loopguard

import "github.com/miekg/dns"

// marked is the request passed on, with the marker, and the writer that
// takes the marker's traces out of the reply. Everything lives in one
// allocation: every query forward sends pays for it.
type marked struct {
	dns.ResponseWriter

	code uint16
	// noOPT is true when the client sent no OPT record: the reply must
	// carry none (RFC 6891 7), though the upstream answers the marked
	// query with one.
	noOPT bool

	msg     dns.Msg
	opt     dns.OPT
	mark    dns.EDNS0_LOCAL
	extra   [2]dns.RR
	options [4]dns.EDNS0
	id      ID
}

// newMarked builds the marked copy of r: r's header, question and
// sections (shared, as the plugins after this one would see them anyway),
// its OPT record copied with every marker option replaced by one holding
// prior and then id. Without an OPT in r it gets one with UDP size 512 and
// no DO bit, what a client without EDNS0 can receive (RFC 6891 6.2.5), so
// the upstream answers as it would have.
func newMarked(w dns.ResponseWriter, r *dns.Msg, opt *dns.OPT, code uint16, prior []byte, id ID) *marked {
	m := &marked{ResponseWriter: w, code: code, noOPT: opt == nil}
	m.msg = *r
	m.mark.Code = code
	if len(prior) == 0 {
		m.id = id
		m.mark.Data = m.id[:]
	} else {
		m.mark.Data = append(append(make([]byte, 0, len(prior)+IDLen), prior...), id[:]...)
	}

	extra := m.extra[:0]
	if len(r.Extra)+1 > len(m.extra) {
		extra = make([]dns.RR, 0, len(r.Extra)+1)
	}
	if opt == nil {
		m.opt.Hdr = dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}
		m.opt.SetUDPSize(dns.MinMsgSize)
		m.opt.Option = append(m.options[:0], &m.mark)
		extra = append(extra, r.Extra...)
		// A TSIG record must stay last (RFC 8945 5.1).
		if n := len(extra); n > 0 && extra[n-1].Header().Rrtype == dns.TypeTSIG {
			extra = append(extra[:n-1], &m.opt, extra[n-1])
		} else {
			extra = append(extra, &m.opt)
		}
		m.msg.Extra = extra
		return m
	}
	m.opt = *opt
	options := m.options[:0]
	if len(opt.Option)+1 > len(m.options) {
		options = make([]dns.EDNS0, 0, len(opt.Option)+1)
	}
	for _, o := range opt.Option {
		if l, ok := o.(*dns.EDNS0_LOCAL); ok && l.Code == code {
			continue
		}
		options = append(options, o)
	}
	m.opt.Option = append(options, &m.mark)
	for _, rr := range r.Extra {
		if rr == opt {
			rr = &m.opt
		}
		extra = append(extra, rr)
	}
	m.msg.Extra = extra
	return m
}

// WriteMsg implements dns.ResponseWriter: reply without the marker's
// traces.
func (m *marked) WriteMsg(reply *dns.Msg) error {
	m.clean(reply)
	return m.ResponseWriter.WriteMsg(reply)
}

// Write implements dns.ResponseWriter for plugins that write packed
// replies: unpacked, cleaned and packed again when there is anything to
// clean.
func (m *marked) Write(b []byte) (int, error) {
	reply := new(dns.Msg)
	if err := reply.Unpack(b); err != nil || !m.clean(reply) {
		return m.ResponseWriter.Write(b)
	}
	out, err := reply.Pack()
	if err != nil {
		return 0, err
	}
	return m.ResponseWriter.Write(out)
}

// clean removes from reply every OPT record when the client sent none,
// else every marker option (an upstream should not echo an option it does
// not know, RFC 6891 6.1.2, but nothing forbids a server that knows it).
// It reports whether it changed anything.
func (m *marked) clean(reply *dns.Msg) bool {
	if m.noOPT {
		return stripOPT(reply)
	}
	opt := reply.IsEdns0()
	if opt == nil || !hasCode(opt, m.code) {
		return false
	}
	kept := make([]dns.EDNS0, 0, len(opt.Option)-1)
	for _, o := range opt.Option {
		if l, ok := o.(*dns.EDNS0_LOCAL); ok && l.Code == m.code {
			continue
		}
		kept = append(kept, o)
	}
	opt.Option = kept
	return true
}

func hasCode(opt *dns.OPT, code uint16) bool {
	for _, o := range opt.Option {
		if l, ok := o.(*dns.EDNS0_LOCAL); ok && l.Code == code {
			return true
		}
	}
	return false
}

// stripOPT removes every OPT record from reply's additional section.
func stripOPT(reply *dns.Msg) bool {
	n := 0
	for _, rr := range reply.Extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			n++
		}
	}
	if n == 0 {
		return false
	}
	kept := make([]dns.RR, 0, len(reply.Extra)-n)
	for _, rr := range reply.Extra {
		if rr.Header().Rrtype != dns.TypeOPT {
			kept = append(kept, rr)
		}
	}
	reply.Extra = kept
	return true
}
