package coredns

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// upstreamDelay is what the upstream resolver adds to every reply: the
// round trip to a real recursive resolver, which is what search-path
// amplification multiplies.
const upstreamDelay = 10 * time.Millisecond

// startDelayedResolver is a resolver on 127.0.0.1 (UDP and TCP) that
// answers, after delay, the A records of records, NODATA for their other
// types and NXDOMAIN for every other name, and counts queries.
func startDelayedResolver(b *testing.B, records map[string]net.IP, delay time.Duration) (string, *atomic.Int64) {
	b.Helper()
	var count atomic.Int64
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		count.Add(1)
		time.Sleep(delay)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		q := r.Question[0]
		name := strings.ToLower(q.Name)
		ip, ok := records[name]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: ip}}
		}
		_ = w.WriteMsg(m)
	})
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.LocalAddr().String()
	tl, err := net.Listen("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []*dns.Server{{PacketConn: l, Handler: h}, {Listener: tl, Handler: h}} {
		go func() { _ = s.ActivateAndServe() }()
		b.Cleanup(func() { _ = s.Shutdown() })
	}
	return addr, &count
}

// BenchmarkLookup measures, per name class, one A lookup by a pod in ns1
// through the node cache under ClusterFirst (the pod walks its search list)
// and ClusterFirstWithAutopath (one query, expanded by the cluster DNS),
// with an upstream resolver that takes 10 ms per reply and no cache
// anywhere, so every lookup pays its whole path. ns/op is the lookup's
// latency; queries/op counts the queries on the pod's wire (to the node
// cache) and upstream/op those reaching the upstream resolver. It runs with
// a node host search list of 1 and of 3 domains: ClusterFirst pays one
// upstream round trip per host search domain for names outside the
// cluster, autopath asks them concurrently.
func BenchmarkLookup(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, cs := startAPIServer(b, ctx)
	for _, s := range []struct{ ns, name string }{{"ns1", "svc1"}, {"ns2", "svc2"}} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := cs.CoreV1().Services(s.ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: s.name},
			Spec: corev1.ServiceSpec{
				Type:  corev1.ServiceTypeClusterIP,
				Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}},
			},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	upstream, upstreamQueries := startDelayedResolver(b,
		map[string]net.IP{
			"example.com.":           net.IPv4(93, 184, 216, 34),
			"intranet.corp.example.": net.IPv4(10, 9, 9, 9),
		}, upstreamDelay)

	clusterPort := testkit.FreeUDPTCPPort(b, "127.0.0.1")
	cluster, err := Start(ctx, fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    searchexpand cluster.local
    kubernetes cluster.local {
        kubeconfig %s dnsplane
    }
    forward . %s {
        prefer_udp
    }
}
`, clusterPort, kubeconfig, upstream), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			b.Errorf("stopping cluster: %v", err)
		}
	}()
	clusterAddr := fmt.Sprintf("127.0.0.1:%d", clusterPort)
	client := &dns.Client{Timeout: 5 * time.Second}
	testkit.Poll(b, "the kubernetes plugin answering", 30*time.Second, func(context.Context) (bool, error) {
		m := new(dns.Msg)
		m.SetQuestion("svc2.ns2.svc.cluster.local.", dns.TypeA)
		r, _, err := client.Exchange(m, clusterAddr)
		if err != nil {
			return false, err
		}
		return len(r.Answer) == 1, fmt.Errorf("answer %v", r)
	})

	classes := []struct{ class, name string }{
		{"same-namespace", "svc1"},
		{"cross-namespace", "svc2.ns2"},
		{"external", "example.com"},
		{"host-search", "intranet"},
		{"nonexistent", "nope"},
	}
	for _, hostSearch := range [][]string{
		{"corp.example"},
		{"corp.example", "eng.corp.example", "example.internal"},
	} {
		nodePort := testkit.FreeUDPTCPPort(b, "127.0.0.1")
		nodeAddr := fmt.Sprintf("127.0.0.1:%d", nodePort)
		nodeCorefile, err := corefile.NodeCache(corefile.NodeCacheOptions{
			Listen:     []string{nodeAddr},
			ClusterDNS: []string{clusterAddr},
			HostSearch: hostSearch,
			NoCache:    true,
		})
		if err != nil {
			b.Fatal(err)
		}
		node, err := Start(ctx, nodeCorefile, nil)
		if err != nil {
			b.Fatal(err)
		}
		clusterFirst := &podResolver{server: nodeAddr, client: client,
			search: append([]string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"}, hostSearch...)}
		autopath := &podResolver{server: nodeAddr, client: client,
			search: []string{"search.ns1.cluster.local.ap.k8s.io"}}

		for _, c := range classes {
			// Both policies must find the same name and addresses, so
			// the benchmark cannot time a broken path.
			cfFound, cfIPs, err1 := clusterFirst.lookup(c.name)
			apFound, apIPs, err2 := autopath.lookup(c.name)
			if err1 != nil || err2 != nil || cfFound != apFound || !slices.Equal(cfIPs, apIPs) {
				b.Fatalf("%s: ClusterFirst %s %v %v, autopath %s %v %v", c.name, cfFound, cfIPs, err1, apFound, apIPs, err2)
			}
			for _, p := range []struct {
				policy string
				r      *podResolver
			}{{"ClusterFirst", clusterFirst}, {"Autopath", autopath}} {
				name := fmt.Sprintf("hostsearch=%d/%s/%s", len(hostSearch), c.class, p.policy)
				b.Run(name, func(b *testing.B) {
					sent0, up0 := p.r.sent.Load(), upstreamQueries.Load()
					for b.Loop() {
						if _, _, err := p.r.lookup(c.name); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(p.r.sent.Load()-sent0)/float64(b.N), "queries/op")
					b.ReportMetric(float64(upstreamQueries.Load()-up0)/float64(b.N), "upstream/op")
				})
			}
		}
		_ = node.Stop()
	}
}
