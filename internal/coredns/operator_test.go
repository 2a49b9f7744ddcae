package coredns

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/render"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// upstream is a nameserver on one address for UDP and TCP that answers
// every A query with its own records and counts the queries per protocol.
type upstream struct {
	addr string
	mu   sync.Mutex
	seen map[string][]string // network -> qnames
}

func (u *upstream) queries(network string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen[network]...)
}

// startUpstream serves answer (the A records of any name) on host, a
// loopback address, over UDP and TCP on one port. With truncateUDP, UDP
// queries get an empty answer with the TC flag set, as a nameserver
// whose answer does not fit does.
func startUpstream(t *testing.T, host string, answer []net.IP, truncateUDP bool) *upstream {
	t.Helper()
	u := &upstream{seen: map[string][]string{}}
	handler := func(network string) dns.HandlerFunc {
		return func(w dns.ResponseWriter, r *dns.Msg) {
			q := r.Question[0]
			u.mu.Lock()
			u.seen[network] = append(u.seen[network], strings.ToLower(q.Name))
			u.mu.Unlock()
			m := new(dns.Msg)
			m.SetReply(r)
			m.Authoritative = true
			if network == "udp" && truncateUDP {
				m.Truncated = true
			} else if q.Qtype == dns.TypeA {
				for _, ip := range answer {
					m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: ip})
				}
			}
			_ = w.WriteMsg(m)
		}
	}
	for range 20 {
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Skipf("no UDP on %s: %v", host, err)
		}
		addr := pc.LocalAddr().String()
		l, err := net.Listen("tcp", addr)
		if err != nil {
			pc.Close()
			continue
		}
		u.addr = addr
		for _, srv := range []*dns.Server{{PacketConn: pc, Handler: handler("udp")}, {Listener: l, Handler: handler("tcp")}} {
			started := make(chan struct{})
			srv.NotifyStartedFunc = func() { close(started) }
			go func() { _ = srv.ActivateAndServe() }()
			<-started
			t.Cleanup(func() { _ = srv.Shutdown() })
		}
		return u
	}
	t.Fatal("no port free for both UDP and TCP")
	return nil
}

func ips(s ...string) []net.IP {
	var out []net.IP
	for _, a := range s {
		out = append(out, net.ParseIP(a))
	}
	return out
}

// lookupA asks addr for name's A records over UDP with a 4096-byte EDNS0
// buffer, retrying while the cluster DNS warms up.
func lookupA(t *testing.T, addr, name string) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m.SetEdns0(4096, false)
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second, UDPSize: 4096}
	var resp *dns.Msg
	testkit.Poll(t, name+" A @"+addr, 20*time.Second, func(context.Context) (bool, error) {
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			return false, err
		}
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
			return false, fmt.Errorf("rcode %s, %d answers", dns.RcodeToString[r.Rcode], len(r.Answer))
		}
		resp = r
		return true, nil
	})
	return resp
}

func answers(r *dns.Msg) string {
	var s []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			s = append(s, a.A.String())
		}
	}
	return strings.Join(s, " ")
}

// TestOperatorCorefileInCoreDNS renders a representative DNS spec and runs
// the Corefile in CoreDNS against dnsplane's API server and nameservers on
// loopback: it loads (dry and for real), names in the cluster domain come
// from the API, a query goes to the forward plugin with the longest
// matching domain, everything else to the upstream resolvers, IPv6
// nameservers work bracketed, and a truncated UDP answer from a forwarder
// is retried over TCP so that the client gets the whole answer (the
// transport rule of docs/dns-operator.md, "The Corefile"), unless
// protocolStrategy TCP sends everything over TCP.
func TestOperatorCorefileInCoreDNS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, cs := startAPIServer(t, ctx)

	foo := startUpstream(t, "127.0.0.1", ips("192.0.2.1"), false)
	aFoo := startUpstream(t, "127.0.0.1", ips("192.0.2.2"), false)
	def := startUpstream(t, "127.0.0.1", ips("192.0.2.3"), false)
	// 40 A records make an answer of about 700 bytes: more than a UDP
	// answer without EDNS0 holds, well within 4096.
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("198.51.100.%d", i+1))
	}
	big := startUpstream(t, "127.0.0.1", ips(many...), true)
	bigTCP := startUpstream(t, "127.0.0.1", ips(many...), true)
	v6Spec := ""
	var v6 *upstream
	if l, err := net.ListenPacket("udp", "[::1]:0"); err == nil {
		l.Close()
		v6 = startUpstream(t, "::1", ips("192.0.2.6"), false)
		v6Spec = fmt.Sprintf("  - {domain: v6.example, nameServers: [%q]}\n", v6.addr)
	}

	y := fmt.Sprintf(`
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [%q]}
  - {domain: a.foo.com, nameServers: [%q], policy: Sequential}
  - {domain: big.example, nameServers: [%q]}
  - {domain: bigtcp.example, nameServers: [%q], protocolStrategy: TCP}
%supstreamResolvers:
  upstreams: [{type: Network, address: 127.0.0.1, port: %s}]
cache: {positiveTTL: 1s, negativeTTL: 1s}
logLevel: Debug
`, foo.addr, aFoo.addr, big.addr, bigTCP.addr, v6Spec, def.addr[strings.LastIndex(def.addr, ":")+1:])
	spec := &operatorv1.DNSSpec{}
	if err := yaml.UnmarshalStrict([]byte(y), spec); err != nil {
		t.Fatal(err)
	}
	corefile, skipped, err := render.Corefile(spec, render.Options{
		Listen: "127.0.0.1:0", Kubeconfig: kubeconfig,
		// health probes its own address while in lameduck, which port 0
		// is not.
		Health: fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1")), Ready: "127.0.0.1:0", Metrics: "127.0.0.1:0",
		// The loop plugin probes its own address, which port 0 is not;
		// it stays in, as in the DaemonSet's Corefile, and finds nothing.
	})
	if err != nil || len(skipped) > 0 {
		t.Fatalf("render: %v, skipped %v", err, skipped)
	}
	if err := DryLoad(ctx, string(corefile)); err != nil {
		t.Fatalf("dry load:\n%s\n%v", corefile, err)
	}
	srv, err := Start(ctx, string(corefile), nil)
	if err != nil {
		t.Fatalf("start:\n%s\n%v", corefile, err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	addr := srv.UDPAddr()

	kube, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("routing", func(t *testing.T) {
		tests := []struct {
			name, want string
			via        *upstream
		}{
			{"www.a.foo.com", "192.0.2.2", aFoo},
			{"a.foo.com", "192.0.2.2", aFoo},
			{"www.foo.com", "192.0.2.1", foo},
			{"foo.com", "192.0.2.1", foo},
			{"b.foo.com", "192.0.2.1", foo},
			{"xa.foo.com", "192.0.2.1", foo},
			{"www.example.org", "192.0.2.3", def},
			{"kubernetes.default.svc.cluster.local", kube.Spec.ClusterIP, nil},
		}
		if v6 != nil {
			tests = append(tests, struct {
				name, want string
				via        *upstream
			}{"www.v6.example", "192.0.2.6", v6})
		}
		for _, tt := range tests {
			r := lookupA(t, addr, tt.name)
			if got := answers(r); got != tt.want {
				t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
			}
			for _, u := range []*upstream{foo, aFoo, def, v6} {
				if u == nil {
					continue
				}
				asked := slices.Contains(u.queries("udp"), dns.Fqdn(tt.name))
				if asked != (u == tt.via) {
					t.Errorf("%s: nameserver %s asked %v", tt.name, u.addr, asked)
				}
			}
		}
	})
	t.Run("truncated answer retried over TCP", func(t *testing.T) {
		r := lookupA(t, addr, "www.big.example")
		if r.Truncated || len(r.Answer) != 40 {
			t.Errorf("client got %d records, truncated %v; want all 40", len(r.Answer), r.Truncated)
		}
		if u, tcp := big.queries("udp"), big.queries("tcp"); len(u) == 0 || len(tcp) == 0 {
			t.Errorf("forwarder asked over UDP %v and TCP %v; want UDP first, then TCP", u, tcp)
		}
	})
	t.Run("protocolStrategy TCP", func(t *testing.T) {
		r := lookupA(t, addr, "www.bigtcp.example")
		if r.Truncated || len(r.Answer) != 40 {
			t.Errorf("client got %d records, truncated %v; want all 40", len(r.Answer), r.Truncated)
		}
		if u, tcp := bigTCP.queries("udp"), bigTCP.queries("tcp"); len(u) != 0 || len(tcp) == 0 {
			t.Errorf("forwarder asked over UDP %v and TCP %v; want TCP only", u, tcp)
		}
	})
}
