package coredns

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// stub is a miekg/dns server answering A queries with addr and recording
// the questions and search list options it receives.
type stub struct {
	mu   sync.Mutex
	seen map[string][]string // qname -> option values
	net  string
	srv  *dns.Server
}

func startStub(t *testing.T, network, addr string, code uint16, answer net.IP) *stub {
	t.Helper()
	s := &stub{seen: map[string][]string{}, net: network}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		vals := []string{}
		if opt := r.IsEdns0(); opt != nil {
			for _, o := range opt.Option {
				if lo, ok := o.(*dns.EDNS0_LOCAL); ok && lo.Code == code {
					vals = append(vals, string(lo.Data))
				}
			}
		}
		s.mu.Lock()
		s.seen[strings.ToLower(r.Question[0].Name)] = vals
		s.mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(r)
		if r.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: answer})
		}
		_ = w.WriteMsg(m)
	})
	started := make(chan struct{})
	switch network {
	case "tcp":
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.srv = &dns.Server{Listener: l, Handler: h}
	default:
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.srv = &dns.Server{PacketConn: pc, Handler: h}
	}
	s.srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = s.srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = s.srv.Shutdown() })
	return s
}

func (s *stub) get(qname string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.seen[qname]
	return v, ok
}

// TestNodeCacheEndToEnd runs a node cache from NodeCacheCorefile in-process
// in front of a "cluster DNS" of two stubs on one address, one for TCP and
// one for UDP. Every name goes there (issue 18: the cluster DNS holds the
// stub domains and upstream resolvers); the cluster zones over TCP, the
// rest over UDP.
func TestNodeCacheEndToEnd(t *testing.T) {
	const code = 65534
	clusterAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	cluster := startStub(t, "tcp", clusterAddr, code, net.IPv4(10, 96, 0, 1))
	clusterUDP := startStub(t, "udp", clusterAddr, code, net.IPv4(192, 0, 2, 1))

	port, health, ready, metrics := testkit.FreeUDPTCPPort(t, "127.0.0.1"), testkit.FreeUDPTCPPort(t, "127.0.0.1"), testkit.FreeUDPTCPPort(t, "127.0.0.1"), testkit.FreeUDPTCPPort(t, "127.0.0.1")
	nodeCorefile, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:     []string{fmt.Sprintf("127.0.0.1:%d", port)},
		ClusterDNS: []string{clusterAddr},
		HostSearch: []string{"foo.com", "bar.com"},
		Health:     fmt.Sprintf("127.0.0.1:%d", health),
		Ready:      fmt.Sprintf("127.0.0.1:%d", ready),
		Metrics:    fmt.Sprintf("127.0.0.1:%d", metrics),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Start(ctx, nodeCorefile, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, nodeCorefile)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stopping srv: %v", err)
		}
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if got := srv.UDPAddr(); got != addr {
		t.Errorf("UDPAddr() = %q, want %q", got, addr)
	}

	tests := []struct {
		name   string
		qname  string
		stub   *stub
		other  *stub
		want   []string
		answer string
	}{
		{"autopath name to cluster DNS over TCP", "svc1.search.ns1.cluster.local.ap.k8s.io.", cluster, clusterUDP,
			[]string{"ns1.svc.cluster.local,svc.cluster.local,cluster.local,foo.com,bar.com"}, "10.96.0.1"},
		{"cluster name to cluster DNS, option stripped", "svc1.ns1.svc.cluster.local.", cluster, clusterUDP, []string{}, "10.96.0.1"},
		{"external name to cluster DNS over UDP, option stripped", "example.com.", clusterUDP, cluster, []string{}, "192.0.2.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion(tt.qname, dns.TypeA)
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_LOCAL{Code: code, Data: []byte("evil.example")}}
			c := &dns.Client{Timeout: 5 * time.Second}
			resp, _, err := c.Exchange(m, addr)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
				t.Fatalf("response %v", resp)
			}
			if a, ok := resp.Answer[0].(*dns.A); !ok || a.A.String() != tt.answer {
				t.Errorf("answer %v, want %s", resp.Answer[0], tt.answer)
			}
			got, ok := tt.stub.get(tt.qname)
			if !ok {
				t.Fatal("the expected server did not see the query")
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("server saw option values %q, want %q", got, tt.want)
			}
			if _, ok := tt.other.get(tt.qname); ok {
				t.Error("the other server saw the query")
			}
		})
	}

	get := func(url string) string {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %s", url, resp.Status)
		}
		return string(body)
	}
	get(fmt.Sprintf("http://127.0.0.1:%d/health", health))
	get(fmt.Sprintf("http://127.0.0.1:%d/ready", ready))
	// The tagging plugin's counter, labelled with the serving block.
	if body := get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics)); !strings.Contains(body, "coredns_searchopt_tagged_total{server=") {
		t.Errorf("metrics lack coredns_searchopt_tagged_total:\n%.2000s", body)
	}

	// Cancelling the context stops the server.
	cancel()
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop on context cancel")
	}
}

func TestStartBadCorefile(t *testing.T) {
	_, err := Start(context.Background(), ".:0 {\n    nosuchplugin\n}\n", nil)
	if err == nil {
		t.Fatal("no error for an unknown directive")
	}
}
