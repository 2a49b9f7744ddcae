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

// autopathStack is a cluster's DNS path on 127.0.0.1, as the autopath
// tests use it and `dnsplane up` runs it: the in-process API server with
// the Services ns1/svc1 and ns2/svc2, an upstream resolver for example.com
// and the host search domain corp.example (intranet.corp.example), the
// cluster DNS `up` runs (ClusterDNSCorefile: searchexpand trusting only
// the address the node cache forwards from, kubernetes, forward, cache),
// and a node cache in front of it, sending it every name, with the host
// search list corp.example.
type autopathStack struct {
	clusterIPs      map[string]string // Service name -> ClusterIP
	upstreamQueries *atomic.Int64
	upstreamAddr    string
	clusterAddr     string
	nodeAddr        string
	trusted         []string // searchexpand's trusted prefixes
}

// startAutopathStack starts the stack, stopped when the test ends, and
// returns once the kubernetes plugin answers both Services.
func startAutopathStack(t *testing.T, ctx context.Context) *autopathStack {
	t.Helper()
	kubeconfig, cs := startAPIServer(t, ctx)
	st := &autopathStack{clusterIPs: map[string]string{}}
	for _, s := range []struct{ ns, name string }{{"ns1", "svc1"}, {"ns2", "svc2"}} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace %s: %v", s.ns, err)
		}
		svc, err := cs.CoreV1().Services(s.ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: s.name},
			Spec: corev1.ServiceSpec{
				Type:  corev1.ServiceTypeClusterIP,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating %s/%s: %v", s.ns, s.name, err)
		}
		if ip := net.ParseIP(svc.Spec.ClusterIP); ip == nil || ip.To4() == nil {
			t.Fatalf("%s/%s has no IPv4 ClusterIP: %q", s.ns, s.name, svc.Spec.ClusterIP)
		}
		st.clusterIPs[s.name] = svc.Spec.ClusterIP
	}

	upstreamAddr, upstreamQueries := startZoneResolver(t,
		[]string{"example.com.", "corp.example."},
		map[string]net.IP{
			"example.com.":           net.IPv4(93, 184, 216, 34),
			"intranet.corp.example.": net.IPv4(10, 9, 9, 9),
		})

	st.upstreamAddr, st.upstreamQueries = upstreamAddr, upstreamQueries

	clusterListen := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	// What `dnsplane up` configures: only the node cache may choose the
	// search list.
	trusted, err := corefile.NodeCacheTrusted(clusterListen, true)
	if err != nil {
		t.Fatal(err)
	}
	st.trusted = trusted
	clusterCorefile, err := corefile.ClusterDNS(corefile.ClusterDNSOptions{
		Listen:     clusterListen,
		Kubeconfig: kubeconfig,
		Upstreams:  []string{upstreamAddr},
		Trusted:    trusted,
	})
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := Start(ctx, clusterCorefile, nil)
	if err != nil {
		t.Fatalf("starting cluster DNS: %v\n%s", err, clusterCorefile)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	st.clusterAddr = cluster.UDPAddr()

	st.nodeAddr = fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	nodeCorefile, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:     []string{st.nodeAddr},
		ClusterDNS: []string{st.clusterAddr}, // the cluster zones with force_tcp
		HostSearch: []string{"corp.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	node, err := Start(ctx, nodeCorefile, nil)
	if err != nil {
		t.Fatalf("starting node cache: %v\n%s", err, nodeCorefile)
	}
	t.Cleanup(func() { _ = node.Stop() })

	// Wait for the kubernetes plugin's informers: both Services answer.
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	for name, ip := range map[string]string{"svc1.ns1.svc.cluster.local.": st.clusterIPs["svc1"], "svc2.ns2.svc.cluster.local.": st.clusterIPs["svc2"]} {
		testkit.Poll(t, "A "+name+" "+ip, 30*time.Second, func(context.Context) (bool, error) {
			m := new(dns.Msg)
			m.SetQuestion(name, dns.TypeA)
			r, _, err := c.Exchange(m, st.clusterAddr)
			if err != nil {
				return false, err
			}
			if len(r.Answer) == 1 {
				if a, ok := r.Answer[0].(*dns.A); ok && a.A.String() == ip {
					return true, nil
				}
			}
			return false, fmt.Errorf("answer %v", r)
		})
	}
	return st
}

// podResolver emulates a pod's stub resolver for one record type (A), as
// glibc's res_search does: with ndots:5 a name with fewer dots tries each
// search domain in order, then the bare name; the first reply with answers
// wins, NXDOMAIN and NODATA go on.
type podResolver struct {
	server string
	search []string
	client *dns.Client
	sent   atomic.Int64
}

func (p *podResolver) lookup(name string) (found string, ips []string, err error) {
	names := make([]string, 0, len(p.search)+1)
	if strings.Count(name, ".") < 5 {
		for _, s := range p.search {
			names = append(names, name+"."+s+".")
		}
	}
	names = append(names, dns.Fqdn(name))
	for _, n := range names {
		m := new(dns.Msg)
		m.SetQuestion(n, dns.TypeA)
		m.RecursionDesired = true
		p.sent.Add(1)
		r, _, err := p.client.Exchange(m, p.server)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", n, err)
		}
		var ips []string
		target := n
		for _, rr := range r.Answer {
			switch rr := rr.(type) {
			case *dns.A:
				ips = append(ips, rr.A.String())
			case *dns.CNAME:
				target = rr.Target
			}
		}
		if r.Rcode == dns.RcodeSuccess && len(ips) > 0 {
			slices.Sort(ips)
			return strings.ToLower(target), ips, nil
		}
	}
	return "", nil, nil
}
