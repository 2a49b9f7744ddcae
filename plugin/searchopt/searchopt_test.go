package searchopt

import (
	"bytes"
	"context"
	"fmt"
	golog "log"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/testkit"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// recordingNext answers NOERROR and keeps a packed copy of the request it
// was handed, so the test sees what would go on the wire.
type recordingNext struct {
	got *dns.Msg
}

func (n *recordingNext) handler(t *testing.T) plugin.Handler {
	t.Helper()
	return test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		b, err := r.Pack()
		if err != nil {
			t.Fatalf("next got a request that does not pack: %v", err)
		}
		n.got = new(dns.Msg)
		if err := n.got.Unpack(b); err != nil {
			t.Fatal(err)
		}
		m := new(dns.Msg)
		m.SetReply(r)
		_ = w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	})
}

// localValues returns the values of all local options with code in m.
func localValues(m *dns.Msg, code uint16) []string {
	var out []string
	if opt := m.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if l, ok := o.(*dns.EDNS0_LOCAL); ok && l.Code == code {
				out = append(out, string(l.Data))
			}
		}
	}
	return out
}

func optionCodes(m *dns.Msg) []uint16 {
	var out []uint16
	if opt := m.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			out = append(out, o.Option())
		}
	}
	return out
}

func TestServeDNS(t *testing.T) {
	const code = searchpath.DefaultOptionCode
	cookie := &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"}
	other := &dns.EDNS0_LOCAL{Code: 65001, Data: []byte("keep.me")}
	evil := &dns.EDNS0_LOCAL{Code: code, Data: []byte("evil.example")}

	// Host search lists that hit the limits: 35 entries (the derived list
	// takes 3 of the 32), and long entries that pass 2048 bytes.
	var many, long []string
	for i := range 35 {
		many = append(many, fmt.Sprintf("h%d.example", i))
	}
	label := strings.Repeat("a", 63)
	for i := range 12 {
		long = append(long, fmt.Sprintf("%s.%s.%s.d%d", label, label, label, i)) // 196 bytes each
	}
	derived := "ns1.svc.cluster.local,svc.cluster.local,cluster.local"

	tests := []struct {
		name       string
		qname      string
		options    []dns.EDNS0 // nil: no OPT record
		hostSearch []string
		want       []string // values of options with code the next handler sees
		wantCodes  []uint16 // all option codes, in order, nil to skip the check
		trimmed    bool     // host_search_trimmed_total must go up
	}{
		{
			name:       "tagged",
			qname:      "svc1.search.ns1.cluster.local.ap.k8s.io.",
			hostSearch: []string{"foo.com", "bar.com"},
			want:       []string{derived + ",foo.com,bar.com"},
			wantCodes:  []uint16{code},
		},
		{
			name:       "tagged, case and base with search label",
			qname:      "Svc1.search.X.search.NS1.Cluster.Local.AP.k8s.io.",
			hostSearch: []string{"foo.com", "bar.com"},
			want:       []string{derived + ",foo.com,bar.com"},
		},
		{
			name:       "client option replaced, others kept",
			qname:      "svc1.search.ns1.cluster.local.ap.k8s.io.",
			options:    []dns.EDNS0{cookie, evil, other, evil},
			hostSearch: []string{"foo.com", "bar.com"},
			want:       []string{derived + ",foo.com,bar.com"},
			wantCodes:  []uint16{dns.EDNS0COOKIE, 65001, code},
		},
		{
			name:      "no host search",
			qname:     "svc1.search.ns1.cluster.local.ap.k8s.io.",
			want:      []string{derived},
			wantCodes: []uint16{code},
		},
		{
			name:      "other name: client option stripped",
			qname:     "www.example.com.",
			options:   []dns.EDNS0{evil, other},
			want:      nil,
			wantCodes: []uint16{65001},
		},
		{
			name:       "other name without OPT unchanged",
			qname:      "www.example.com.",
			hostSearch: []string{"foo.com"},
			want:       nil,
		},
		{
			name:      "unparsable zone name: stripped, not tagged",
			qname:     "svc1.ns1.cluster.local.ap.k8s.io.",
			options:   []dns.EDNS0{other, evil},
			want:      nil,
			wantCodes: []uint16{65001},
		},
		{
			name:  "other cluster domain is unparsable",
			qname: "svc1.search.ns1.other.local.ap.k8s.io.",
			want:  nil,
		},
		{
			name:  "namespace not valid in the option is unparsable",
			qname: "svc1.search.-ns.cluster.local.ap.k8s.io.",
			want:  nil,
		},
		{
			name:       "entry limit truncates host search",
			qname:      "svc1.search.ns1.cluster.local.ap.k8s.io.",
			hostSearch: many,
			want:       []string{derived + "," + strings.Join(many[:searchpath.MaxEntries-3], ",")},
			trimmed:    true,
		},
		{
			name:       "entry limit exactly met",
			qname:      "svc1.search.ns1.cluster.local.ap.k8s.io.",
			hostSearch: many[:searchpath.MaxEntries-3],
			want:       []string{derived + "," + strings.Join(many[:searchpath.MaxEntries-3], ",")},
		},
		{
			name:       "byte limit truncates host search",
			qname:      "svc1.search.ns1.cluster.local.ap.k8s.io.",
			hostSearch: long,
			// 53 + 10*197 = 2023 bytes fit, an 11th entry would not.
			want:    []string{derived + "," + strings.Join(long[:10], ",")},
			trimmed: true,
		},
		{
			name:       "byte limit depends on the namespace",
			qname:      "svc1.search." + strings.Repeat("n", 63) + ".cluster.local.ap.k8s.io.",
			hostSearch: long[:10],
			// 53 + 62 bytes of cluster entries more: the 10th entry no
			// longer fits.
			want:    []string{strings.Repeat("n", 63) + ".svc.cluster.local,svc.cluster.local,cluster.local," + strings.Join(long[:9], ",")},
			trimmed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var next recordingNext
			s := &SearchOpt{Next: next.handler(t), ClusterDomain: "cluster.local", Code: code, HostSearch: tt.hostSearch}
			r := new(dns.Msg)
			r.SetQuestion(tt.qname, dns.TypeA)
			if tt.options != nil {
				r.SetEdns0(1232, true)
				r.IsEdns0().Option = append([]dns.EDNS0(nil), tt.options...)
			}
			before := testkit.CounterValue(t, trimmedCount.WithLabelValues(""))
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			rcode, err := s.ServeDNS(context.Background(), rec, r)
			if err != nil || rcode != dns.RcodeSuccess {
				t.Fatalf("ServeDNS = %d, %v", rcode, err)
			}
			want := before
			if tt.trimmed {
				want++
			}
			if after := testkit.CounterValue(t, trimmedCount.WithLabelValues("")); after != want {
				t.Errorf("host_search_trimmed_total went from %v to %v, want %v", before, after, want)
			}
			if rec.Msg == nil || rec.Rcode != dns.RcodeSuccess {
				t.Fatalf("no NOERROR reply written: %v", rec.Msg)
			}
			got := next.got
			if got == nil {
				t.Fatal("next handler not called")
			}
			if got.Question[0].Name != tt.qname {
				t.Errorf("question changed to %q", got.Question[0].Name)
			}
			if v := localValues(got, code); !reflect.DeepEqual(v, tt.want) {
				t.Errorf("option values = %q, want %q", v, tt.want)
			}
			if tt.wantCodes != nil && !reflect.DeepEqual(optionCodes(got), tt.wantCodes) {
				t.Errorf("option codes = %v, want %v", optionCodes(got), tt.wantCodes)
			}
			if tt.options != nil {
				if opt := got.IsEdns0(); opt == nil || opt.UDPSize() != 1232 || !opt.Do() {
					t.Errorf("client OPT record not kept: %v", opt)
				}
			}
			for _, v := range localValues(got, code) {
				if l, err := searchpath.Decode([]byte(v)); err != nil || len(l) > searchpath.MaxEntries || len(v) > searchpath.MaxChars {
					t.Errorf("option %q outside the limits: %v", v, err)
				}
			}
		})
	}
}

// TestTrimmedLoggedOnce: a host search list too long for the option is
// counted on every query and logged once, not once per query.
func TestTrimmedLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	golog.SetOutput(&logs)
	t.Cleanup(func() { golog.SetOutput(os.Stderr) })

	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("h%d.example", i))
	}
	var next recordingNext
	s := &SearchOpt{Next: next.handler(t), ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode, HostSearch: many}
	before := testkit.CounterValue(t, trimmedCount.WithLabelValues(""))
	const queries = 5
	for i := range queries {
		r := new(dns.Msg)
		r.SetQuestion(fmt.Sprintf("svc1.search.ns%d.cluster.local.ap.k8s.io.", i), dns.TypeA)
		if _, err := s.ServeDNS(context.Background(), dnstest.NewRecorder(&test.ResponseWriter{}), r); err != nil {
			t.Fatal(err)
		}
	}
	if after := testkit.CounterValue(t, trimmedCount.WithLabelValues("")); after != before+queries {
		t.Errorf("host_search_trimmed_total went from %v to %v, want +%d", before, after, queries)
	}
	out := logs.String()
	if n := strings.Count(out, "host search list has 40 entries"); n != 1 {
		t.Errorf("warning logged %d times, want once:\n%s", n, out)
	}
	for _, want := range []string{"[WARNING] plugin/searchopt:", "only the first 29 fit", `"h29.example" and later are not tried`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// TestServeDNSCustomCode: only the configured code is stripped and set.
func TestServeDNSCustomCode(t *testing.T) {
	var next recordingNext
	s := &SearchOpt{Next: next.handler(t), ClusterDomain: "c.example", Code: 65010, HostSearch: []string{"foo.com"}}
	r := new(dns.Msg)
	r.SetQuestion("a.b.search.dev.c.example.ap.k8s.io.", dns.TypeAAAA)
	r.SetEdns0(1232, false)
	r.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte("x")}, &dns.EDNS0_LOCAL{Code: 65010, Data: []byte("evil.com")}}
	if _, err := s.ServeDNS(context.Background(), dnstest.NewRecorder(&test.ResponseWriter{}), r); err != nil {
		t.Fatal(err)
	}
	if v := localValues(next.got, 65010); !reflect.DeepEqual(v, []string{"dev.svc.c.example,svc.c.example,c.example,foo.com"}) {
		t.Errorf("option 65010 = %q", v)
	}
	if v := localValues(next.got, searchpath.DefaultOptionCode); !reflect.DeepEqual(v, []string{"x"}) {
		t.Errorf("option 65534 = %q, want the client's, untouched", v)
	}
}

func TestServeDNSNoQuestion(t *testing.T) {
	var next recordingNext
	s := &SearchOpt{Next: next.handler(t), ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode}
	r := new(dns.Msg)
	r.SetEdns0(1232, false)
	r.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte("x")}}
	if _, err := s.ServeDNS(context.Background(), dnstest.NewRecorder(&test.ResponseWriter{}), r); err != nil {
		t.Fatal(err)
	}
	if v := localValues(r, searchpath.DefaultOptionCode); v != nil {
		t.Errorf("client option kept: %q", v)
	}
}

func TestName(t *testing.T) {
	if n := (&SearchOpt{}).Name(); n != "searchopt" {
		t.Errorf("Name() = %q", n)
	}
}

// FuzzServeDNS: any packet that unpacks goes through ServeDNS without a
// panic, and what reaches the next handler never carries a client's option
// value or one outside the limits.
func FuzzServeDNS(f *testing.F) {
	seed := func(qname string, opts ...dns.EDNS0) {
		m := new(dns.Msg)
		m.SetQuestion(qname, dns.TypeA)
		if opts != nil {
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = opts
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed("svc1.search.ns1.cluster.local.ap.k8s.io.")
	seed("svc1.search.ns1.cluster.local.ap.k8s.io.", &dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte("evil.com")})
	seed("search.search.search.cluster.local.ap.k8s.io.")
	seed("x.ns1.cluster.local.ap.k8s.io.", &dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte("a,,b")})
	seed("www.example.com.", &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})

	hostSearch := []string{"foo.com", "bar.com"}
	f.Fuzz(func(t *testing.T, packet []byte) {
		r := new(dns.Msg)
		if err := r.Unpack(packet); err != nil {
			return
		}
		var seen *dns.Msg
		next := test.HandlerFunc(func(_ context.Context, _ dns.ResponseWriter, r *dns.Msg) (int, error) {
			seen = r
			return dns.RcodeSuccess, nil
		})
		s := &SearchOpt{Next: next, ClusterDomain: "cluster.local", Code: searchpath.DefaultOptionCode, HostSearch: hostSearch}
		if _, err := s.ServeDNS(context.Background(), dnstest.NewRecorder(&test.ResponseWriter{}), r); err != nil {
			t.Fatal(err)
		}
		if seen == nil {
			t.Fatal("next handler not called")
		}
		vals := localValues(seen, searchpath.DefaultOptionCode)
		if len(vals) > 1 {
			t.Fatalf("%d options with our code", len(vals))
		}
		if len(vals) == 1 {
			list, err := searchpath.Decode([]byte(vals[0]))
			if err != nil || len(list) < 3 || !strings.HasSuffix(vals[0], ",foo.com,bar.com") {
				t.Fatalf("option %q (%v) was not built by the plugin", vals[0], err)
			}
		}
	})
}
