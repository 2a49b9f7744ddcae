package coredns

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestKubernetesPluginAgainstAPIServer runs stock CoreDNS's kubernetes
// plugin against dnsplane's own API server and checks that cluster.local
// answers follow the objects created through client-go, including a
// deletion observed through the plugin's watch.
func TestKubernetesPluginAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	kubeconfig, cs := startAPIServer(t, ctx)

	const ns = "ns1"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	svc1, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc1"},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating svc1: %v", err)
	}
	clusterIP := net.ParseIP(svc1.Spec.ClusterIP)
	if clusterIP == nil || clusterIP.To4() == nil {
		t.Fatalf("svc1 has no IPv4 ClusterIP: %q", svc1.Spec.ClusterIP)
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hl"},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports:     []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating hl: %v", err)
	}
	ready := true
	port80, portName, tcp := int32(80), "http", corev1.ProtocolTCP
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "hl-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "hl"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.1.2.3"},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &port80, Protocol: &tcp}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating EndpointSlice: %v", err)
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ext: %v", err)
	}

	corefile := fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    kubernetes cluster.local in-addr.arpa {
        kubeconfig %s dnsplane
        pods insecure
    }
}
`, testkit.FreeUDPTCPPort(t, "127.0.0.1"), kubeconfig)
	srv, err := Start(ctx, corefile, nil)
	if err != nil {
		t.Fatalf("starting CoreDNS: %v", err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stopping srv: %v", err)
		}
	}()
	addr := srv.UDPAddr()
	if addr == "" {
		t.Fatal("no UDP address")
	}

	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	query := func(name string, qtype uint16) (*dns.Msg, error) {
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		r, _, err := c.Exchange(m, addr)
		return r, err
	}
	// poll re-queries until ok accepts the reply or the deadline passes,
	// and returns the last reply.
	poll := func(name string, qtype uint16, ok func(*dns.Msg) bool) *dns.Msg {
		t.Helper()
		var last *dns.Msg
		testkit.Poll(t, name+" "+dns.TypeToString[qtype]+": an acceptable answer", 30*time.Second, func(context.Context) (bool, error) {
			r, err := query(name, qtype)
			if err != nil {
				return false, err
			}
			last = r
			return ok(r), fmt.Errorf("reply %v", r)
		})
		return last
	}
	hasA := func(ip string) func(*dns.Msg) bool {
		return func(r *dns.Msg) bool {
			for _, rr := range r.Answer {
				if a, ok := rr.(*dns.A); ok && a.A.String() == ip {
					return r.Rcode == dns.RcodeSuccess
				}
			}
			return false
		}
	}

	// Wait for the plugin's informers to sync: svc1's A record appears.
	svcName := "svc1.ns1.svc.cluster.local."
	poll(svcName, dns.TypeA, hasA(clusterIP.String()))

	t.Run("ClusterIP A", func(t *testing.T) {
		r, err := query(svcName, dns.TypeA)
		if err != nil || !hasA(clusterIP.String())(r) || len(r.Answer) != 1 {
			t.Fatalf("A %s = %v, %v; want only %s", svcName, r, err, clusterIP)
		}
	})
	t.Run("SRV", func(t *testing.T) {
		name := "_http._tcp.svc1.ns1.svc.cluster.local."
		r, err := query(name, dns.TypeSRV)
		if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Fatalf("SRV %s = %v, %v", name, r, err)
		}
		srv, ok := r.Answer[0].(*dns.SRV)
		if !ok || srv.Port != 80 || srv.Target != svcName {
			t.Fatalf("SRV %s answer %v; want port 80 target %s", name, r.Answer[0], svcName)
		}
	})
	t.Run("headless A from EndpointSlice", func(t *testing.T) {
		name := "hl.ns1.svc.cluster.local."
		r := poll(name, dns.TypeA, hasA("10.1.2.3"))
		if len(r.Answer) != 1 {
			t.Fatalf("A %s = %v; want only 10.1.2.3", name, r)
		}
	})
	t.Run("ExternalName CNAME", func(t *testing.T) {
		name := "ext.ns1.svc.cluster.local."
		r, err := query(name, dns.TypeCNAME)
		if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Fatalf("CNAME %s = %v, %v", name, r, err)
		}
		if cn, ok := r.Answer[0].(*dns.CNAME); !ok || cn.Target != "example.com." {
			t.Fatalf("CNAME %s answer %v; want example.com.", name, r.Answer[0])
		}
	})
	t.Run("PTR", func(t *testing.T) {
		name, err := dns.ReverseAddr(clusterIP.String())
		if err != nil {
			t.Fatal(err)
		}
		r, err := query(name, dns.TypePTR)
		if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			t.Fatalf("PTR %s = %v, %v", name, r, err)
		}
		if p, ok := r.Answer[0].(*dns.PTR); !ok || p.Ptr != svcName {
			t.Fatalf("PTR %s answer %v; want %s", name, r.Answer[0], svcName)
		}
	})
	t.Run("NXDOMAIN", func(t *testing.T) {
		name := "nope.ns1.svc.cluster.local."
		r, err := query(name, dns.TypeA)
		if err != nil || r.Rcode != dns.RcodeNameError {
			t.Fatalf("A %s = %v, %v; want NXDOMAIN", name, r, err)
		}
	})
	t.Run("pod insecure", func(t *testing.T) {
		name := "10-1-2-4.ns1.pod.cluster.local."
		r, err := query(name, dns.TypeA)
		if err != nil || !hasA("10.1.2.4")(r) || len(r.Answer) != 1 {
			t.Fatalf("A %s = %v, %v; want 10.1.2.4", name, r, err)
		}
	})
	t.Run("delete observed by watch", func(t *testing.T) {
		if err := cs.CoreV1().Services(ns).Delete(ctx, "svc1", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting svc1: %v", err)
		}
		poll(svcName, dns.TypeA, func(r *dns.Msg) bool { return r.Rcode == dns.RcodeNameError })
	})
}
