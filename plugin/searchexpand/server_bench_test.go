package searchexpand

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/cache" // The cache hits measured here.
	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// BenchmarkCoreDNSServer measures whole queries through CoreDNS in-process,
// over UDP on 127.0.0.1, with and without searchexpand in front of cache:
// what every query pays for the plugin's presence, including what the
// server does per query (a goroutine per UDP packet whose stack grows with
// the frames on the path), which BenchmarkServeDNS, calling the handler in
// the benchmark's goroutine, does not see. The cache answers every query but
// the first; file below it stands for the kubernetes plugin and the
// upstream.
//
// The client runs in the same process, so ns/op is the round trip of one
// query, client included: compare the rows with benchstat, and take a CPU
// profile (-cpuprofile) to see the server's share.
func BenchmarkCoreDNSServer(b *testing.B) {
	addDirective(b)
	caddy.Quiet = true
	dnsserver.Quiet = true
	zone := filepath.Join(b.TempDir(), "root.zone")
	if err := os.WriteFile(zone, []byte(rootZone), 0o600); err != nil {
		b.Fatal(err)
	}
	option := append(searchpath.Derived("ns1", "cluster.local"), "corp.example")
	for _, bc := range []struct {
		name, plugin, qname string
		option              bool
	}{
		{"plain/without-searchexpand", "", "svc1.ns1.svc.cluster.local.", false},
		{"plain/with-searchexpand", "searchexpand cluster.local", "svc1.ns1.svc.cluster.local.", false},
		// searchexpand's answer cache against the cache plugin's hit of
		// the plain name above (docs/autopath.md, "Answer cache").
		{"autopath/answer-cache", "searchexpand cluster.local", "svc1.search.ns1.cluster.local.ap.k8s.io.", false},
		{"autopath/answer-cache-option", "searchexpand cluster.local", "svc1.search.ns1.cluster.local.ap.k8s.io.", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			addr := startBenchServer(b, fmt.Sprintf(`.:0 {
    bind 127.0.0.1
    %s
    cache 30
    file %s .
}
`, bc.plugin, zone))
			r := new(dns.Msg)
			r.SetQuestion(bc.qname, dns.TypeA)
			if bc.option {
				if err := searchpath.SetOption(r, searchpath.DefaultOptionCode, option); err != nil {
					b.Fatal(err)
				}
			}
			query, err := r.Pack()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(4) // several queries in flight, as dnsperf keeps
			b.RunParallel(func(pb *testing.PB) {
				c, err := net.Dial("udp", addr)
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				buf := make([]byte, 512)
				for pb.Next() {
					if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
						b.Error(err)
						return
					}
					if _, err := c.Write(query); err != nil {
						b.Error(err)
						return
					}
					n, err := c.Read(buf)
					// The reply's header: NOERROR with at least one answer.
					if err != nil || n < 12 || buf[3]&0xf != 0 || buf[6] == 0 && buf[7] == 0 {
						b.Errorf("reply %x, %v", buf[:n], err)
						return
					}
				}
			})
		})
	}
}

// startBenchServer starts a CoreDNS instance for the Corefile, stopped when
// the benchmark ends, and returns its UDP address.
func startBenchServer(b *testing.B, input string) string {
	b.Helper()
	inst, err := caddy.Start(corefile(input))
	if err != nil {
		b.Fatalf("starting CoreDNS: %v", err)
	}
	b.Cleanup(func() {
		if err := inst.Stop(); err != nil {
			b.Errorf("stopping CoreDNS: %v", err)
		}
	})
	srvs := inst.Servers()
	if len(srvs) == 0 || srvs[0].LocalAddr() == nil {
		b.Fatal("CoreDNS has no UDP listener")
	}
	return srvs[0].LocalAddr().String()
}
