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
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/operator/render"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestForwardPluginsReachEveryPod is issue 18's first item in process: the
// cluster DNS serves the Corefile the operator renders for a DNS resource
// with a forward plugin for the private zone fwd.test and upstream
// resolvers of its own, and the node cache `up` runs sits in front of it.
// Every way a pod asks — a name in the zone through the node cache (a
// ClusterFirst or Custom pod), a short name its search list expands into
// the zone, an autopath name whose candidate falls in the zone, the same
// with the node cache down, and an external name — is answered as the DNS
// resource says, and no fwd.test name reaches the upstream resolvers. The
// node cache used to send every name outside the cluster zones to the
// host's resolvers, and searchexpand its candidates to the `.` block's
// forward only.
func TestForwardPluginsReachEveryPod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and two CoreDNS instances")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, _ := startAPIServer(t, ctx)

	private, _ := startZoneResolver(t, []string{"fwd.test."}, map[string]net.IP{
		"www.fwd.test.": net.IPv4(192, 0, 2, 77),
		"api.fwd.test.": net.IPv4(192, 0, 2, 78),
	})
	// The DNS resource's upstream resolvers, recording every name asked.
	def := startRecordingResolver(t, map[string]net.IP{"www.example.org.": net.IPv4(192, 0, 2, 3)})
	spec := &operatorv1.DNSSpec{}
	y := fmt.Sprintf(`
pluginConfig:
  forwardPlugins:
  - {domain: fwd.test, nameServers: [%q]}
upstreamResolvers:
  upstreams: [{type: Network, address: 127.0.0.1, port: %s}]
`, private, def.addr[strings.LastIndex(def.addr, ":")+1:])
	if err := yaml.UnmarshalStrict([]byte(y), spec); err != nil {
		t.Fatal(err)
	}

	clusterAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	trusted, err := corefile.NodeCacheTrusted(clusterAddr, true)
	if err != nil {
		t.Fatal(err)
	}
	// The node's host search list ends in the private zone, as a site's
	// resolv.conf might.
	hostSearch := []string{"corp.test", "fwd.test"}
	clusterCorefile, skipped, err := render.Corefile(spec, render.Options{
		Listen: clusterAddr, Kubeconfig: kubeconfig, InProcess: true,
		Trusted: trusted, HostSearch: hostSearch,
	})
	if err != nil || len(skipped) > 0 {
		t.Fatalf("render: %v, skipped %v", err, skipped)
	}
	cluster, err := Start(ctx, string(clusterCorefile), nil)
	if err != nil {
		t.Fatalf("cluster DNS:\n%s\n%v", clusterCorefile, err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })

	nodeAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	nodeCorefile, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:     []string{nodeAddr},
		ClusterDNS: []string{clusterAddr},
		HostSearch: hostSearch,
	})
	if err != nil {
		t.Fatal(err)
	}
	node, err := Start(ctx, nodeCorefile, nil)
	if err != nil {
		t.Fatalf("node cache:\n%s\n%v", nodeCorefile, err)
	}
	t.Cleanup(func() { _ = node.Stop() })

	// The kubernetes plugin has synced: cluster candidates get NXDOMAIN,
	// not SERVFAIL.
	lookupA(t, clusterAddr, "kubernetes.default.svc.cluster.local")

	const apSuffix = ".search.ns1.cluster.local.ap.k8s.io."
	client := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	clusterFirstSearch := append([]string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"}, hostSearch...)
	tests := []struct {
		name   string
		server string // the node cache, or the cluster DNS when the node cache is down
		// lookup is what the pod's resolver sends: a name through its
		// search list (search non-nil), or one query.
		qname  string
		search []string
		found  string // the name that answers
		want   string
	}{
		{"name in the zone", nodeAddr, "www.fwd.test.", nil, "www.fwd.test.", "192.0.2.77"},
		{"short name through a ClusterFirst search list", nodeAddr, "api", clusterFirstSearch, "api.fwd.test.", "192.0.2.78"},
		{"short name through a Custom search list", nodeAddr, "www", []string{"fwd.test"}, "www.fwd.test.", "192.0.2.77"},
		{"autopath: host search candidate", nodeAddr, "api" + apSuffix, nil, "api.fwd.test.", "192.0.2.78"},
		{"autopath: bare name", nodeAddr, "www.fwd.test" + apSuffix, nil, "www.fwd.test.", "192.0.2.77"},
		{"upstream resolvers of .", nodeAddr, "www.example.org.", nil, "www.example.org.", "192.0.2.3"},
		{"node cache down: name in the zone", clusterAddr, "www.fwd.test.", nil, "www.fwd.test.", "192.0.2.77"},
		{"node cache down: autopath host search candidate", clusterAddr, "api" + apSuffix, nil, "api.fwd.test.", "192.0.2.78"},
		{"node cache down: autopath bare name", clusterAddr, "www.fwd.test" + apSuffix, nil, "www.fwd.test.", "192.0.2.77"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found string
			var ips []string
			if tt.search != nil {
				p := &podResolver{server: tt.server, search: tt.search, client: client}
				f, got, err := p.lookup(tt.qname)
				if err != nil {
					t.Fatal(err)
				}
				found, ips = f, got
			} else {
				m := new(dns.Msg)
				m.SetQuestion(tt.qname, dns.TypeA)
				m.RecursionDesired = true
				r, _, err := client.Exchange(m, tt.server)
				if err != nil {
					t.Fatal(err)
				}
				found = tt.qname
				for _, rr := range r.Answer {
					switch rr := rr.(type) {
					case *dns.CNAME:
						found = strings.ToLower(rr.Target)
					case *dns.A:
						ips = append(ips, rr.A.String())
					}
				}
			}
			if found != tt.found || strings.Join(ips, " ") != tt.want {
				t.Errorf("%s @%s: %s %v, want %s [%s]", tt.qname, tt.server, found, ips, tt.found, tt.want)
			}
		})
	}
	for _, q := range def.asked() {
		if dns.IsSubDomain("fwd.test.", q) {
			t.Errorf("the upstream resolvers were asked %s: a private name leaked", q)
		}
	}
}

// recordingResolver is a nameserver on 127.0.0.1 (UDP and TCP, one port)
// answering A queries from records, NXDOMAIN for other names, and
// recording every name it is asked.
type recordingResolver struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func (r *recordingResolver) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func startRecordingResolver(t *testing.T, records map[string]net.IP) *recordingResolver {
	t.Helper()
	rr := &recordingResolver{addr: fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		q := r.Question[0]
		name := strings.ToLower(q.Name)
		rr.mu.Lock()
		rr.seen = append(rr.seen, name)
		rr.mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(r)
		ip, ok := records[name]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: ip}}
		}
		_ = w.WriteMsg(m)
	})
	for _, network := range []string{"udp", "tcp"} {
		started := make(chan struct{})
		s := &dns.Server{Addr: rr.addr, Net: network, Handler: h, NotifyStartedFunc: func() { close(started) }}
		errc := make(chan error, 1)
		go func() { errc <- s.ListenAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			t.Fatalf("resolver %s: %v", network, err)
		}
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return rr
}
