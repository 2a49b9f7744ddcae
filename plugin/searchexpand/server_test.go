package searchexpand

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind" // Listen on 127.0.0.1 only.
	_ "github.com/coredns/coredns/plugin/file" // The records in the test Corefile.
	"github.com/miekg/dns"
)

const rootZone = `$ORIGIN .
@ 30 IN SOA ns.test. admin.test. 1 7200 3600 1209600 30
@ 30 IN NS ns.test.
ns.test. 30 IN A 127.0.0.1
svc1.ns1.svc.cluster.local. 30 IN A 10.0.0.1
svc2.ns2.svc.cluster.local. 30 IN A 10.0.0.2
`

// corefile implements caddy.Input for a Corefile held in a string.
type corefile string

func (c corefile) Body() []byte       { return []byte(c) }
func (c corefile) Path() string       { return "Corefile" }
func (c corefile) ServerType() string { return "dns" }

// addDirective puts searchexpand before cache in the plugin order, as an
// external plugin's plugin.cfg entry does in a CoreDNS build.
func addDirective(t *testing.T) {
	t.Helper()
	if slices.Contains(dnsserver.Directives, pluginName) {
		return
	}
	i := slices.Index(dnsserver.Directives, "cache")
	if i < 0 {
		t.Fatal("no cache directive in dnsserver.Directives")
	}
	dnsserver.Directives = slices.Insert(dnsserver.Directives, i, pluginName)
}

// TestCoreDNSServer runs CoreDNS in-process with searchexpand in front of
// file serving a root zone, which stands for the kubernetes plugin and the
// upstream (two service records, NXDOMAIN for everything else). hosts would
// do for the records, but it answers SERVFAIL, not NXDOMAIN, for names it
// does not have, and template needs a module not in go.mod.
func TestCoreDNSServer(t *testing.T) {
	addDirective(t)
	caddy.Quiet = true
	dnsserver.Quiet = true
	zone := filepath.Join(t.TempDir(), "root.zone")
	if err := os.WriteFile(zone, []byte(rootZone), 0o600); err != nil {
		t.Fatal(err)
	}
	input := fmt.Sprintf(`.:0 {
    bind 127.0.0.1
    searchexpand cluster.local
    file %s .
}
`, zone)
	inst, err := caddy.Start(corefile(input))
	if err != nil {
		t.Fatalf("starting CoreDNS: %v", err)
	}
	defer inst.Stop()
	srvs := inst.Servers()
	if len(srvs) == 0 || srvs[0].LocalAddr() == nil {
		t.Fatal("CoreDNS has no UDP listener")
	}
	addr := srvs[0].LocalAddr().String()

	tests := []struct {
		name   string
		qname  string
		rcode  int
		target string
		ip     string
	}{
		{"same namespace", "svc1.search.ns1.cluster.local.ap.k8s.io.", dns.RcodeSuccess, "svc1.ns1.svc.cluster.local.", "10.0.0.1"},
		{"cross namespace", "svc2.ns2.search.ns1.cluster.local.ap.k8s.io.", dns.RcodeSuccess, "svc2.ns2.svc.cluster.local.", "10.0.0.2"},
		{"nonexistent", "nope.search.ns1.cluster.local.ap.k8s.io.", dns.RcodeNameError, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion(tt.qname, dns.TypeA)
			resp, err := dns.Exchange(m, addr)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Rcode != tt.rcode || resp.Id != m.Id || len(resp.Question) != 1 || resp.Question[0].Name != tt.qname {
				t.Fatalf("response %v", resp)
			}
			if tt.target == "" {
				if len(resp.Answer) != 0 {
					t.Errorf("answers %v", resp.Answer)
				}
				return
			}
			if len(resp.Answer) != 2 {
				t.Fatalf("answers %v, want CNAME + A", resp.Answer)
			}
			c, ok := resp.Answer[0].(*dns.CNAME)
			if !ok || c.Hdr.Name != tt.qname || c.Target != tt.target {
				t.Errorf("first answer %v", resp.Answer[0])
			}
			a, ok := resp.Answer[1].(*dns.A)
			if !ok || a.Hdr.Name != tt.target || !a.A.Equal(net.ParseIP(tt.ip)) {
				t.Errorf("second answer %v", resp.Answer[1])
			}
		})
	}
}
