package e2e

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// stoppableNameserver answers every A query under zone with ip on addr
// (UDP and TCP) until stop; start serves it again on the same address.
type stoppableNameserver struct {
	zone, ip, Addr string
	udp, tcp       *dns.Server
}

func (s *stoppableNameserver) start(t *testing.T) {
	t.Helper()
	mux := dns.NewServeMux()
	mux.HandleFunc(dns.Fqdn(s.zone), func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if len(r.Question) == 1 && r.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 0},
				A:   net.ParseIP(s.ip),
			})
		}
		_ = w.WriteMsg(m)
	})
	pc, err := net.ListenPacket("udp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	// start returns once both serve: a Shutdown before that is refused
	// ("server not started") and the server would serve on after stop.
	var started sync.WaitGroup
	started.Add(2)
	udp := &dns.Server{PacketConn: pc, Handler: mux, NotifyStartedFunc: started.Done}
	tcp := &dns.Server{Listener: l, Handler: mux, NotifyStartedFunc: started.Done}
	s.udp, s.tcp = udp, tcp
	go func() { _ = udp.ActivateAndServe() }()
	go func() { _ = tcp.ActivateAndServe() }()
	started.Wait()
}

func (s *stoppableNameserver) stop() {
	if s.udp != nil {
		_ = s.udp.Shutdown()
		_ = s.tcp.Shutdown()
		s.udp, s.tcp = nil, nil
	}
}

func newStoppableNameserver(t *testing.T, zone, ip string) *stoppableNameserver {
	t.Helper()
	s := &stoppableNameserver{zone: zone, ip: ip, Addr: fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))}
	s.start(t)
	t.Cleanup(s.stop)
	return s
}

// dnsHealthStatus is the part of the DNS status the health test reads.
type dnsHealthStatus struct {
	Status struct {
		Conditions []struct {
			Type, Status, Reason, Message string
		}
		Upstreams []struct {
			Domain, Address, Message string
			Healthy                  bool
			LastChecked              string `json:"lastChecked"`
		}
	}
}

// TestDNSOperatorForwardHealth: the operator of `dnsplane up` reads the
// in-process cluster DNS's forward health-check counters into
// status.upstreams and the UpstreamsAvailable condition. One of foo.com's
// two nameservers is stopped; queries make CoreDNS health-check it; the
// status reports it unhealthy (the condition False, reason
// UpstreamUnhealthy) while the other stays healthy; restarted, it is
// healthy again.
func TestDNSOperatorForwardHealth(t *testing.T) {
	requireKubectl(t)
	a1 := newStoppableNameserver(t, "foo.com", "192.0.2.1")
	a2 := newStoppableNameserver(t, "foo.com", "192.0.2.2")
	def := startNameserver(t, ".", "192.0.2.100")
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil, "--upstream", def.Addr, "--operator-health-interval", "1s")
	mustKubectl(t, u.Kubeconfig, fmt.Sprintf(`apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  pluginConfig:
    forwardPlugins:
    - domain: foo.com
      nameServers: [%q, %q]
      policy: RoundRobin
`, a1.Addr, a2.Addr), "apply", "-f", "-")

	read := func() (dnsHealthStatus, string) {
		out := mustKubectl(t, u.Kubeconfig, "", "get", "dns", "default", "-o", "yaml")
		var s dnsHealthStatus
		if err := yaml.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("kubectl get dns default -o yaml: %v\n%s", err, out)
		}
		return s, out
	}
	// state is "<addr> healthy|unhealthy" for each foo.com nameserver and
	// the condition's status.
	state := func(s dnsHealthStatus) (map[string]bool, string, string) {
		h := map[string]bool{}
		for _, up := range s.Status.Upstreams {
			if up.Domain == "foo.com" {
				h[up.Address] = up.Healthy
			}
		}
		cond, reason := "", ""
		for _, c := range s.Status.Conditions {
			if c.Type == "UpstreamsAvailable" {
				cond, reason = c.Status, c.Reason
			}
		}
		return h, cond, reason
	}
	waitFor := func(what string, query bool, ok func(h map[string]bool, cond, reason string) bool) (dnsHealthStatus, string, time.Duration) {
		t.Helper()
		start := time.Now()
		deadline := start.Add(45 * time.Second)
		var out string
		for time.Now().Before(deadline) {
			if query {
				// Failed queries are what start CoreDNS's health checks.
				for range 4 {
					_, _ = lookupA(u.ClusterDNS, "www.foo.com.")
				}
			}
			var s dnsHealthStatus
			s, out = read()
			if h, cond, reason := state(s); ok(h, cond, reason) {
				return s, out, time.Since(start)
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: not within 45s; last status:\n%s", what, out)
		return dnsHealthStatus{}, "", 0
	}

	_, _, took := waitFor("both nameservers listed healthy", false, func(h map[string]bool, cond, _ string) bool {
		return len(h) == 2 && h[a1.Addr] && h[a2.Addr] && cond == "True"
	})
	t.Logf("apply → both foo.com nameservers listed healthy: %v", took.Round(time.Millisecond))
	if ip, err := lookupA(u.ClusterDNS, "www.foo.com."); err != nil {
		t.Fatalf("www.foo.com: %q, %v", ip, err)
	}

	a2.stop()
	s, out, took := waitFor("the stopped nameserver reported unhealthy", true, func(h map[string]bool, cond, reason string) bool {
		return h[a1.Addr] && !h[a2.Addr] && cond == "False" && reason == "UpstreamUnhealthy"
	})
	t.Logf("nameserver stopped → status reports it unhealthy: %v\n%s", took.Round(time.Millisecond), out)
	for _, up := range s.Status.Upstreams {
		if up.Address == a2.Addr && !strings.Contains(up.Message, "failed health checks since") {
			t.Errorf("unhealthy nameserver's message = %q\n%s", up.Message, out)
		}
	}
	// The other nameserver answers for both.
	if ip, err := lookupA(u.ClusterDNS, "www.foo.com."); err != nil || ip != a1.ip {
		t.Errorf("www.foo.com with one nameserver down: %q, %v; want %s", ip, err, a1.ip)
	}

	a2.start(t)
	_, out, took = waitFor("the restarted nameserver reported healthy", false, func(h map[string]bool, cond, _ string) bool {
		return h[a1.Addr] && h[a2.Addr] && cond == "True"
	})
	t.Logf("nameserver restarted → status reports it healthy: %v", took.Round(time.Millisecond))
	_ = out
}
