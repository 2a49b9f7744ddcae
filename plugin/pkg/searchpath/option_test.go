package searchpath

import (
	"reflect"
	"testing"

	"github.com/miekg/dns"
)

// wire packs and unpacks m, so options are checked as they travel.
func wire(t *testing.T, m *dns.Msg) *dns.Msg {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	out := new(dns.Msg)
	if err := out.Unpack(b); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOptionRoundTrip(t *testing.T) {
	list := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}
	m := new(dns.Msg)
	m.SetQuestion("svc1.search.ns1.cluster.local.ap.k8s.io.", dns.TypeA)
	// A client-sent option with our code, and an unrelated one, already there.
	m.SetEdns0(1232, false)
	opt := m.IsEdns0()
	opt.Option = append(opt.Option, &dns.EDNS0_LOCAL{Code: DefaultOptionCode, Data: []byte("evil.example")}, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})
	if err := SetOption(m, DefaultOptionCode, list); err != nil {
		t.Fatal(err)
	}
	got, found, err := GetOption(wire(t, m), DefaultOptionCode)
	if err != nil || !found || !reflect.DeepEqual(got, list) {
		t.Fatalf("GetOption = %q, %v, %v", got, found, err)
	}
	if n := len(wire(t, m).IsEdns0().Option); n != 2 {
		t.Errorf("%d options after SetOption, want the cookie and ours", n)
	}
	StripOption(m, DefaultOptionCode)
	if _, found, _ := GetOption(wire(t, m), DefaultOptionCode); found {
		t.Error("option still there after StripOption")
	}
}

func TestGetOptionErrors(t *testing.T) {
	tests := []struct {
		name    string
		options []dns.EDNS0
		found   bool
		wantErr bool
	}{
		{"none", nil, false, false},
		{"other code", []dns.EDNS0{&dns.EDNS0_LOCAL{Code: 65001, Data: []byte("x")}}, false, false},
		{"bad value", []dns.EDNS0{&dns.EDNS0_LOCAL{Code: DefaultOptionCode, Data: []byte("a..b")}}, true, true},
		{"twice", []dns.EDNS0{&dns.EDNS0_LOCAL{Code: DefaultOptionCode, Data: []byte("a")}, &dns.EDNS0_LOCAL{Code: DefaultOptionCode, Data: []byte("b")}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion("x.", dns.TypeA)
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = tt.options
			_, found, err := GetOption(m, DefaultOptionCode)
			if found != tt.found || (err != nil) != tt.wantErr {
				t.Errorf("found %v err %v", found, err)
			}
		})
	}
	if _, found, err := GetOption(new(dns.Msg), DefaultOptionCode); found || err != nil {
		t.Errorf("no OPT record: found %v err %v", found, err)
	}
}
