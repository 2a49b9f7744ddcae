package e2e

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// testNameserver is a DNS server on 127.0.0.1 (UDP and TCP) that answers
// every A query in its zone with one address and counts the queries.
type testNameserver struct {
	Addr    string // 127.0.0.1:PORT
	IP      string
	queries atomic.Int64
}

// startNameserver serves zone ("." for every name) with ip on a free port
// until the test ends.
func startNameserver(t *testing.T, zone, ip string) *testNameserver {
	t.Helper()
	ns := &testNameserver{IP: ip}
	mux := dns.NewServeMux()
	mux.HandleFunc(dns.Fqdn(zone), func(w dns.ResponseWriter, r *dns.Msg) {
		ns.queries.Add(1)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if len(r.Question) == 1 && r.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{
				// TTL 0: the cluster DNS's cache must not hide which server answers.
				Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 0},
				A:   net.ParseIP(ip),
			})
		}
		_ = w.WriteMsg(m)
	})
	for attempt := 0; ; attempt++ {
		port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
		ns.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		pc, err := net.ListenPacket("udp", ns.Addr)
		if err != nil {
			if attempt < 5 {
				continue
			}
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", ns.Addr)
		if err != nil {
			pc.Close()
			if attempt < 5 {
				continue
			}
			t.Fatal(err)
		}
		udp := &dns.Server{PacketConn: pc, Handler: mux}
		tcp := &dns.Server{Listener: l, Handler: mux}
		go func() { _ = udp.ActivateAndServe() }()
		go func() { _ = tcp.ActivateAndServe() }()
		t.Cleanup(func() {
			_ = udp.Shutdown()
			_ = tcp.Shutdown()
		})
		return ns
	}
}

// dnsManifest is a DNS default forwarding foo.com to fooNS and bar.com to barNS.
func dnsManifest(fooNS, barNS string) string {
	return fmt.Sprintf(`apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  pluginConfig:
    forwardPlugins:
    - domain: foo.com
      nameServers: [%q]
    - domain: bar.com
      nameServers: [%q]
`, fooNS, barNS)
}

// TestDNSOperatorSeedForwarding is the DNS operator's end-to-end test plan
// (docs/dns-operator.md, "The seed's end-to-end test") through `dnsplane
// up`: a DNS default with forward plugins for foo.com and bar.com
// reaches the cluster DNS without a restart; cluster names and other names
// still resolve; and moving foo.com to another nameserver loses no query
// sent during the reload.
func TestDNSOperatorSeedForwarding(t *testing.T) {
	requireKubectl(t)
	srvA := startNameserver(t, "foo.com", "192.0.2.1")
	srvB := startNameserver(t, "bar.com", "192.0.2.2")
	srvC := startNameserver(t, "foo.com", "192.0.2.3")
	srvDefault := startNameserver(t, ".", "192.0.2.100")

	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil, "--upstream", srvDefault.Addr)

	// Apply: foo.com → A, bar.com → B.
	mustKubectl(t, u.Kubeconfig, dnsManifest(srvA.Addr, srvB.Addr), "apply", "-f", "-")
	applied := time.Now()
	var last string
	deadline := applied.Add(30 * time.Second)
	for {
		ip, err := lookupA(u.ClusterDNS, "www.foo.com.")
		if err == nil && ip == srvA.IP {
			break
		}
		last = fmt.Sprintf("%q, %v", ip, err)
		if time.Now().After(deadline) {
			t.Fatalf("www.foo.com was not answered by server A (%s) within 30s of the apply; last: %s", srvA.IP, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("kubectl apply → first answer from foo.com's nameserver: %v", time.Since(applied).Round(time.Millisecond))

	for _, c := range []struct{ name, want string }{
		{"kubernetes.default.svc.cluster.local.", "10.96.0.1"},
		{"www.bar.com.", srvB.IP},
		{"www.example.org.", srvDefault.IP},
	} {
		if ip, err := lookupA(u.ClusterDNS, c.name); err != nil || ip != c.want {
			t.Errorf("%s: %q, %v; want %s", c.name, ip, err, c.want)
		}
	}
	if n := srvB.queries.Load(); n == 0 {
		t.Errorf("server B saw no query")
	}
	if n := srvDefault.queries.Load(); n == 0 {
		t.Errorf("the default upstream saw no query")
	}
	if t.Failed() {
		t.FailNow()
	}

	// Switch foo.com to C under continuous queries.
	var (
		mu       sync.Mutex
		failures []string
		sent     atomic.Int64
		sawC     atomic.Bool
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := &dns.Client{Timeout: 2 * time.Second}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			name, allowed := "www.foo.com.", []string{srvA.IP, srvC.IP}
			if i%2 == 1 {
				name, allowed = "www.bar.com.", []string{srvB.IP}
			}
			q := new(dns.Msg)
			q.SetQuestion(name, dns.TypeA)
			sent.Add(1)
			start := time.Now()
			r, _, err := c.Exchange(q, u.ClusterDNS)
			var problem string
			switch {
			case err != nil:
				problem = err.Error()
			case r.Rcode != dns.RcodeSuccess:
				problem = "rcode " + dns.RcodeToString[r.Rcode]
			default:
				var ips []string
				for _, rr := range r.Answer {
					if a, ok := rr.(*dns.A); ok {
						ips = append(ips, a.A.String())
					}
				}
				switch {
				case len(ips) != 1:
					problem = fmt.Sprintf("answer %v, want one A record", ips)
				case ips[0] != allowed[0] && (len(allowed) == 1 || ips[0] != allowed[1]):
					problem = fmt.Sprintf("A %s, want one of %v", ips[0], allowed)
				case ips[0] == srvC.IP:
					sawC.Store(true)
				case ips[0] == srvA.IP && sawC.Load():
					// Queries are sequential: once C answered, the new Corefile serves.
					problem = "A " + ips[0] + " from the old nameserver after the new one answered"
				}
			}
			if problem != "" {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%s %s: %s", start.Format("15:04:05.000"), name, problem))
				mu.Unlock()
			}
		}
	}()
	// Let the query loop run a little before the change.
	time.Sleep(200 * time.Millisecond)
	mustKubectl(t, u.Kubeconfig, dnsManifest(srvC.Addr, srvB.Addr), "apply", "-f", "-")
	switched := time.Now()
	for !sawC.Load() && time.Since(switched) < 30*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	switchTime := time.Since(switched)
	// Keep querying a little after the switch: the old server must be gone for good.
	time.Sleep(300 * time.Millisecond)
	cancel()
	wg.Wait()
	if !sawC.Load() {
		t.Fatalf("www.foo.com was not answered by server C (%s) within 30s of the second apply", srvC.IP)
	}
	t.Logf("kubectl apply → first answer from foo.com's new nameserver: %v (%d queries sent from 200ms before the apply to 300ms after that answer, %d failed)",
		switchTime.Round(time.Millisecond), sent.Load(), len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d queries failed during the switch:\n%s", len(failures), sent.Load(), strings.Join(failures, "\n"))
	}
	if ip, err := lookupA(u.ClusterDNS, "www.foo.com."); err != nil || ip != srvC.IP {
		t.Errorf("www.foo.com after the switch: %q, %v; want C's %s", ip, err, srvC.IP)
	}

	// The status and the published Corefile.
	var obj struct {
		Status struct {
			Conditions []struct {
				Type, Status, Reason, Message string
			}
		}
	}
	out := mustKubectl(t, u.Kubeconfig, "", "get", "dns", "default", "-o", "yaml")
	if err := yaml.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("kubectl get dns default -o yaml: %v\n%s", err, out)
	}
	status := map[string]string{}
	for _, c := range obj.Status.Conditions {
		status[c.Type] = c.Status
	}
	for _, typ := range []string{"Available", "Progressing", "Degraded"} {
		if _, ok := status[typ]; !ok {
			t.Errorf("no %s condition in the DNS status:\n%s", typ, out)
		}
	}
	if status["Degraded"] != "False" {
		t.Errorf("Degraded is %q, want False:\n%s", status["Degraded"], out)
	}
	corefile := mustKubectl(t, u.Kubeconfig, "", "get", "configmap", "-n", "dnsplane-system", "dns-default", "-o", "jsonpath={.data.Corefile}")
	if !strings.Contains(corefile, "foo.com") || !strings.Contains(corefile, srvC.Addr) || strings.Contains(corefile, srvA.Addr) {
		t.Errorf("the published Corefile does not forward foo.com to %s alone:\n%s", srvC.Addr, corefile)
	}
}
