package loopguard

import (
	"bytes"
	"context"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
)

// FuzzParseMarks: the marker comes from the network. Parsing never panics,
// what parses is a whole number of IDs, each of which Contains finds, and
// the packed option survives the wire.
func FuzzParseMarks(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add(self[:], []byte{1, 2, 3})
	f.Add(append(self[:], other[:]...), self[:])
	f.Fuzz(func(t *testing.T, a, b []byte) {
		opt := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		opt.Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: DefaultCode, Data: a}, &dns.EDNS0_LOCAL{Code: DefaultCode + 1, Data: a}, &dns.EDNS0_LOCAL{Code: DefaultCode, Data: b}}
		// Through the wire, as the plugin gets it.
		m := new(dns.Msg)
		m.SetQuestion("x.", dns.TypeA)
		m.Extra = []dns.RR{opt}
		packed, err := m.Pack()
		if err != nil {
			return
		}
		var got dns.Msg
		if err := got.Unpack(packed); err != nil {
			t.Fatalf("unpacking what packed: %v", err)
		}
		marks := ParseMarks(got.IsEdns0(), DefaultCode)
		if len(marks.IDs)%IDLen != 0 {
			t.Fatalf("IDs of %d bytes", len(marks.IDs))
		}
		var want []byte
		wantMalformed := 0
		for _, d := range [][]byte{a, b} {
			if len(d) == 0 || len(d)%IDLen != 0 {
				wantMalformed++
				continue
			}
			want = append(want, d...)
		}
		if !bytes.Equal(marks.IDs, want) || marks.Malformed != wantMalformed {
			t.Fatalf("ParseMarks = %x, %d malformed; want %x, %d", marks.IDs, marks.Malformed, want, wantMalformed)
		}
		for i := 0; i < len(want); i += IDLen {
			if !marks.Contains(ID(want[i : i+IDLen])) {
				t.Fatalf("ID %x not found", want[i:i+IDLen])
			}
		}
	})
}

// FuzzServeDNS: any query that unpacks is answered or passed on without a
// panic; what is passed on carries exactly one valid marker ending in the
// server's ID; the reply carries no marker, and an OPT record only when
// the query had one.
func FuzzServeDNS(f *testing.F) {
	for _, q := range []*dns.Msg{
		query(false, 0, false),
		query(true, 1232, true, marker(DefaultCode, other)),
		query(true, 512, false, marker(DefaultCode, self), &dns.EDNS0_LOCAL{Code: DefaultCode, Data: []byte{1}}),
	} {
		b, err := q.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, packet []byte) {
		r := new(dns.Msg)
		if err := r.Unpack(packet); err != nil || len(r.Question) == 0 {
			return
		}
		hadOPT := r.IsEdns0() != nil
		next := &recorder{reply: upstreamReply}
		g := &LoopGuard{Next: next, ID: self, Code: DefaultCode, MaxHops: DefaultMaxHops}
		rec := &recordingWriter{ResponseWriter: &test.ResponseWriter{}}
		if _, err := g.ServeDNS(context.Background(), rec, r); err != nil {
			return
		}
		if next.got != nil {
			m := markersIn(next.got, DefaultCode)
			if len(m) != 1 || len(m[0])%IDLen != 0 || !bytes.HasSuffix(m[0], self[:]) {
				t.Fatalf("passed on with markers %x", m)
			}
		}
		if rec.msg == nil {
			t.Fatal("no reply")
		}
		if !hadOPT && rec.msg.IsEdns0() != nil {
			t.Fatalf("reply with an OPT record to a query without one:\n%s", rec.msg)
		}
		if m := markersIn(rec.msg, DefaultCode); len(m) > 0 {
			t.Fatalf("reply carries the marker %x", m)
		}
	})
}
