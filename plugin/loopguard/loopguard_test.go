package loopguard

import (
	"bytes"
	"context"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
)

// recorder is the next plugin: it keeps the request it got and answers
// with reply(r).
type recorder struct {
	got   *dns.Msg
	reply func(r *dns.Msg) *dns.Msg
}

func (n *recorder) Name() string { return "recorder" }

func (n *recorder) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	n.got = r.Copy()
	m := n.reply(r)
	return m.Rcode, w.WriteMsg(m)
}

// upstreamReply answers as an EDNS0 upstream does: with an OPT of its
// own, echoing every option it got (the worst case for the client).
func upstreamReply(r *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Answer = []dns.RR{test.A(r.Question[0].Name + " 30 IN A 192.0.2.1")}
	if o := r.IsEdns0(); o != nil {
		echo := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}, Option: o.Option}
		echo.SetUDPSize(4096)
		m.Extra = append(m.Extra, echo)
	}
	return m
}

func marker(code uint16, ids ...ID) *dns.EDNS0_LOCAL {
	l := &dns.EDNS0_LOCAL{Code: code}
	for _, id := range ids {
		l.Data = append(l.Data, id[:]...)
	}
	return l
}

func query(edns bool, udp uint16, do bool, options ...dns.EDNS0) *dns.Msg {
	r := new(dns.Msg)
	r.SetQuestion("www.example.org.", dns.TypeA)
	if edns {
		r.SetEdns0(udp, do)
		r.IsEdns0().Option = options
	}
	return r
}

func markersIn(m *dns.Msg, code uint16) [][]byte {
	var out [][]byte
	if o := m.IsEdns0(); o != nil {
		for _, e := range o.Option {
			if l, ok := e.(*dns.EDNS0_LOCAL); ok && l.Code == code {
				out = append(out, l.Data)
			}
		}
	}
	return out
}

var (
	self  = ID{1, 2, 3, 4, 5, 6, 7, 8}
	other = ID{9, 9, 9, 9, 9, 9, 9, 9}
)

func TestServeDNS(t *testing.T) {
	t.Parallel()
	cookie := &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}
	tests := []struct {
		name string
		r    *dns.Msg
		// passed: the next plugin got the query, with marker wantIDs,
		// UDP size wantUDP and DO wantDO.
		passed  bool
		wantIDs []ID
		wantUDP uint16
		wantDO  bool
		// wantOPT: the client's reply has an OPT record.
		wantOPT bool
		// wantRcode of a query not passed on.
		wantRcode int
	}{
		{"no OPT: marked with a 512-byte OPT, none in the reply", query(false, 0, false), true, []ID{self}, 512, false, false, 0},
		{"client OPT kept", query(true, 1232, true, cookie), true, []ID{self}, 1232, true, true, 0},
		{"earlier hop appended to", query(true, 4096, false, marker(DefaultCode, other)), true, []ID{other, self}, 4096, false, true, 0},
		{"two marker options merged", query(true, 4096, false, marker(DefaultCode, other), marker(DefaultCode, other)), true, []ID{other, other, self}, 4096, false, true, 0},
		{"malformed marker replaced", query(true, 4096, false, &dns.EDNS0_LOCAL{Code: DefaultCode, Data: []byte{1, 2, 3}}), true, []ID{self}, 4096, false, true, 0},
		{"empty marker replaced", query(true, 4096, false, &dns.EDNS0_LOCAL{Code: DefaultCode}), true, []ID{self}, 4096, false, true, 0},
		{"other local option untouched", query(true, 4096, false, &dns.EDNS0_LOCAL{Code: 65534, Data: []byte("a,b")}), true, []ID{self}, 4096, false, true, 0},
		{"own ID: loop", query(true, 4096, false, marker(DefaultCode, other, self)), false, nil, 0, false, true, dns.RcodeServerFailure},
		{"own ID first: loop", query(true, 4096, false, marker(DefaultCode, self)), false, nil, 0, false, true, dns.RcodeServerFailure},
		{"own ID past the hop bound: still a loop", query(true, 4096, false, marker(DefaultCode, other, other, other, self)), false, nil, 0, false, true, dns.RcodeServerFailure},
		{"hop bound", query(true, 4096, false, marker(DefaultCode, other, other, other)), false, nil, 0, false, true, dns.RcodeRefused},
		{"one below the hop bound", query(true, 4096, false, marker(DefaultCode, other, other)), true, []ID{other, other, self}, 4096, false, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next := &recorder{reply: upstreamReply}
			g := &LoopGuard{Next: next, ID: self, Code: DefaultCode, MaxHops: 3}
			before := tc.r.Copy()
			w := &test.ResponseWriter{}
			rec := &recordingWriter{ResponseWriter: w}
			rcode, err := g.ServeDNS(context.Background(), rec, tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.r.String() != before.String() {
				t.Errorf("request changed:\n%s\nwas\n%s", tc.r, before)
			}
			if rec.msg == nil {
				t.Fatal("no reply written")
			}
			if got := rec.msg.IsEdns0() != nil; got != tc.wantOPT {
				t.Errorf("reply has OPT %v, want %v:\n%s", got, tc.wantOPT, rec.msg)
			}
			if m := markersIn(rec.msg, DefaultCode); len(m) > 0 {
				t.Errorf("reply carries the marker %x", m)
			}
			if !tc.passed {
				if next.got != nil {
					t.Errorf("query passed on: %s", next.got)
				}
				if rec.msg.Rcode != tc.wantRcode || !plugin.ClientWrite(rcode) {
					t.Errorf("rcode %s, returned %d: want %s written here", dns.RcodeToString[rec.msg.Rcode], rcode, dns.RcodeToString[tc.wantRcode])
				}
				if o := rec.msg.IsEdns0(); o != nil && (len(o.Option) != 1 || o.Option[0].Option() != dns.EDNS0EDE) {
					t.Errorf("reply options %v, want one EDE", o.Option)
				}
				return
			}
			if next.got == nil {
				t.Fatal("query not passed on")
			}
			var want []byte
			for _, id := range tc.wantIDs {
				want = append(want, id[:]...)
			}
			m := markersIn(next.got, DefaultCode)
			if len(m) != 1 || !bytes.Equal(m[0], want) {
				t.Errorf("marker passed on %x, want one option %x", m, want)
			}
			o := next.got.IsEdns0()
			if o.UDPSize() != tc.wantUDP || o.Do() != tc.wantDO {
				t.Errorf("passed on UDP size %d DO %v, want %d %v", o.UDPSize(), o.Do(), tc.wantUDP, tc.wantDO)
			}
			if n := len(o.Option); n != countOthers(tc.r)+1 {
				t.Errorf("passed on %d options, want the client's %d others and the marker: %v", n, countOthers(tc.r), o.Option)
			}
			if rec.msg.Rcode != dns.RcodeSuccess || len(rec.msg.Answer) != 1 {
				t.Errorf("reply %s", rec.msg)
			}
		})
	}
}

func countOthers(r *dns.Msg) int {
	n := 0
	if o := r.IsEdns0(); o != nil {
		for _, e := range o.Option {
			if l, ok := e.(*dns.EDNS0_LOCAL); !ok || l.Code != DefaultCode {
				n++
			}
		}
	}
	return n
}

// recordingWriter keeps the reply as the client would get it.
type recordingWriter struct {
	dns.ResponseWriter
	msg *dns.Msg
}

func (w *recordingWriter) WriteMsg(m *dns.Msg) error {
	w.msg = m
	return nil
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.msg = new(dns.Msg)
	return len(b), w.msg.Unpack(b)
}

// TestWritePacked: a plugin that writes a packed reply gets it cleaned too.
func TestWritePacked(t *testing.T) {
	t.Parallel()
	packed := &recorder{}
	next := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		b, err := upstreamReply(r).Pack()
		if err != nil {
			return dns.RcodeServerFailure, err
		}
		_, err = w.Write(b)
		return dns.RcodeSuccess, err
	})
	_ = packed
	g := &LoopGuard{Next: next, ID: self, Code: DefaultCode, MaxHops: DefaultMaxHops}
	for _, edns := range []bool{false, true} {
		rec := &recordingWriter{ResponseWriter: &test.ResponseWriter{}}
		if _, err := g.ServeDNS(context.Background(), rec, query(edns, 1232, false)); err != nil {
			t.Fatal(err)
		}
		if got := rec.msg.IsEdns0() != nil; got != edns {
			t.Errorf("client EDNS %v: reply has OPT %v", edns, got)
		}
		if m := markersIn(rec.msg, DefaultCode); len(m) > 0 {
			t.Errorf("reply carries the marker %x", m)
		}
	}
}

// TestTSIGStaysLast: the OPT added to a signed query goes before the TSIG.
func TestTSIGStaysLast(t *testing.T) {
	t.Parallel()
	r := query(false, 0, false)
	r.SetTsig("key.", dns.HmacSHA256, 300, 0)
	next := &recorder{reply: upstreamReply}
	g := &LoopGuard{Next: next, ID: self, Code: DefaultCode, MaxHops: DefaultMaxHops}
	if _, err := g.ServeDNS(context.Background(), &recordingWriter{ResponseWriter: &test.ResponseWriter{}}, r); err != nil {
		t.Fatal(err)
	}
	ex := next.got.Extra
	if len(ex) != 2 || ex[0].Header().Rrtype != dns.TypeOPT || ex[1].Header().Rrtype != dns.TypeTSIG {
		t.Errorf("passed on additional section %v, want OPT then TSIG", ex)
	}
}

// BenchmarkServeDNS is the cost per query that passes (every query the
// server answers goes through it ahead of cache).
func BenchmarkServeDNS(b *testing.B) {
	next := plugin.HandlerFunc(func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) { return dns.RcodeSuccess, nil })
	g := &LoopGuard{Next: next, ID: self, Code: DefaultCode, MaxHops: DefaultMaxHops}
	w := &test.ResponseWriter{}
	for _, bc := range []struct {
		name string
		r    *dns.Msg
	}{
		{"no OPT", query(false, 0, false)},
		{"client OPT", query(true, 1232, false, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"})},
		{"second hop", query(true, 1232, false, marker(DefaultCode, other))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = g.ServeDNS(context.Background(), w, bc.r)
			}
		})
	}
}
