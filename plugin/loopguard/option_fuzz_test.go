package loopguard

import (
	"bytes"
	"testing"

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
