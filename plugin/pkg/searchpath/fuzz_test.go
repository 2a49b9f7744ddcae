package searchpath

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// FuzzParse: never panics, and a parsed name reassembles into the query.
func FuzzParse(f *testing.F) {
	f.Add("svc1.search.ns1.cluster.local.ap.k8s.io.", "cluster.local")
	f.Add("a.search.search.search.ns.c.ap.k8s.io", "c")
	f.Add("..ap.k8s.io.", ".")
	f.Fuzz(func(t *testing.T, qname, cd string) {
		n, ok := Parse(qname, cd)
		if !ok {
			return
		}
		again := n.Base + "." + SearchName(n.Namespace, n.ClusterDomain) + "."
		if !strings.EqualFold(again, strings.TrimSuffix(qname, ".")+".") {
			t.Fatalf("Parse(%q, %q) = %+v, which reassembles to %q", qname, cd, n, again)
		}
	})
}

// FuzzDecode: never panics; what decodes re-encodes to the same bytes and
// stays within the limits.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("ns1.svc.cluster.local,svc.cluster.local,cluster.local"))
	f.Add([]byte(",,,"))
	f.Add([]byte("a\x00b"))
	f.Fuzz(func(t *testing.T, value []byte) {
		list, err := Decode(value)
		if err != nil {
			return
		}
		if len(list) > MaxEntries || len(value) > MaxChars {
			t.Fatalf("limits exceeded: %d entries, %d bytes", len(list), len(value))
		}
		back, err := Encode(list)
		if err != nil || string(back) != string(value) {
			t.Fatalf("Decode(%q) = %q re-encodes to %q, %v", value, list, back, err)
		}
	})
}

// FuzzGetOption: arbitrary DNS messages from the wire never panic the
// option reader.
func FuzzGetOption(f *testing.F) {
	m := new(dns.Msg)
	m.SetQuestion("svc1.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	_ = SetOption(m, DefaultOptionCode, Derived("ns1", "cluster.local"))
	b, _ := m.Pack()
	f.Add(b)
	f.Fuzz(func(t *testing.T, packet []byte) {
		msg := new(dns.Msg)
		if err := msg.Unpack(packet); err != nil {
			return
		}
		_, _, _ = GetOption(msg, DefaultOptionCode)
		StripOption(msg, DefaultOptionCode)
	})
}

// FuzzInZone: InZone agrees with dns.IsSubDomain on names without escapes
// (the only names where a '.' in the text is not a label boundary).
func FuzzInZone(f *testing.F) {
	for _, s := range [][2]string{
		{"ap.k8s.io.", "a.search.ns.cluster.local.ap.k8s.io."},
		{"ap.k8s.io.", "AP.K8S.IO."},
		{"ap.k8s.io.", "xap.k8s.io."},
		{"cluster.local.", "svc.Cluster.Local."},
		{".", "example.com."},
		{"cluster.local.", "local."},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, zone, name string) {
		if strings.Contains(zone+name, `\`) || !dns.IsFqdn(zone) || !dns.IsFqdn(name) {
			return
		}
		if _, ok := dns.IsDomainName(zone); !ok {
			return
		}
		if _, ok := dns.IsDomainName(name); !ok {
			return
		}
		if got, want := InZone(zone, name), dns.IsSubDomain(zone, name); got != want {
			t.Errorf("InZone(%q, %q) = %v, dns.IsSubDomain = %v", zone, name, got, want)
		}
	})
}
