package searchopt

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"    // Listen on 127.0.0.1 only.
	_ "github.com/coredns/coredns/plugin/forward" // The upstream in the test Corefile.
	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// corefile implements caddy.Input for a Corefile held in a string.
type corefile string

func (c corefile) Body() []byte       { return []byte(c) }
func (c corefile) Path() string       { return "Corefile" }
func (c corefile) ServerType() string { return "dns" }

// addDirective puts searchopt before forward in the plugin order, as an
// external plugin's plugin.cfg entry does in a CoreDNS build.
func addDirective(t *testing.T) {
	t.Helper()
	if slices.Contains(dnsserver.Directives, pluginName) {
		return
	}
	i := slices.Index(dnsserver.Directives, "forward")
	if i < 0 {
		t.Fatal("no forward directive in dnsserver.Directives")
	}
	dnsserver.Directives = slices.Insert(dnsserver.Directives, i, pluginName)
}

// TestCoreDNSServer runs CoreDNS in-process with searchopt in front of
// forward (over TCP, as in the node cache) to a test upstream that records
// the search list option it receives.
func TestCoreDNSServer(t *testing.T) {
	addDirective(t)

	var (
		mu   sync.Mutex
		seen = map[string][]string{} // qname -> option values received
	)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	upstream := &dns.Server{Listener: l, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		var vals []string
		if opt := r.IsEdns0(); opt != nil {
			for _, o := range opt.Option {
				if lo, ok := o.(*dns.EDNS0_LOCAL); ok && lo.Code == searchpath.DefaultOptionCode {
					vals = append(vals, string(lo.Data))
				}
			}
		}
		mu.Lock()
		seen[r.Question[0].Name] = vals
		mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: net.IPv4(192, 0, 2, 1)})
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	upstream.NotifyStartedFunc = func() { close(started) }
	go func() { _ = upstream.ActivateAndServe() }()
	<-started
	defer func() { _ = upstream.Shutdown() }()

	caddy.Quiet = true
	dnsserver.Quiet = true
	input := fmt.Sprintf(`.:0 {
    bind 127.0.0.1
    searchopt cluster.local {
        host_search foo.com
    }
    forward . %s {
        force_tcp
    }
}
`, l.Addr())
	inst, err := caddy.Start(corefile(input))
	if err != nil {
		t.Fatalf("starting CoreDNS: %v", err)
	}
	defer func() {
		if err := inst.Stop(); err != nil {
			t.Errorf("stopping CoreDNS: %v", err)
		}
	}()
	srvs := inst.Servers()
	if len(srvs) == 0 || srvs[0].LocalAddr() == nil {
		t.Fatal("CoreDNS has no UDP listener")
	}
	addr := srvs[0].LocalAddr().String()

	tests := []struct {
		name  string
		qname string
		want  []string
	}{
		{"tagged", "svc1.search.ns1.cluster.local.ap.k8s.io.", []string{"ns1.svc.cluster.local,svc.cluster.local,cluster.local,foo.com"}},
		{"other name stripped", "www.example.com.", nil},
		{"unparsable stripped", "x.ns1.cluster.local.ap.k8s.io.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion(tt.qname, dns.TypeA)
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: searchpath.DefaultOptionCode, Data: []byte("evil.example")}}
			resp, err := dns.Exchange(m, addr)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
				t.Fatalf("response %v", resp)
			}
			mu.Lock()
			got, ok := seen[tt.qname]
			mu.Unlock()
			if !ok {
				t.Fatal("upstream did not see the query")
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("upstream saw option values %q, want %q", got, tt.want)
			}
		})
	}
}
