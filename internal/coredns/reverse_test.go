package coredns

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// startPTRStub is a nameserver answering every PTR query with
// forwarded.example.
func startPTRStub(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if q := r.Question[0]; q.Qtype == dns.TypePTR {
			m.Answer = []dns.RR{&dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 30}, Ptr: "forwarded.example."}}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// TestForwardedReverseZoneKeepsClusterPTR: with a forward plugin for
// in-addr.arpa or 10.in-addr.arpa, the PTR of a Service IP still comes
// from the cluster, and other reverse names go to the forwarder.
func TestForwardedReverseZoneKeepsClusterPTR(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeconfig, cs := startAPIServer(t, ctx)
	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc1"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcPTR, err := dns.ReverseAddr(svc.Spec.ClusterIP)
	if err != nil {
		t.Fatal(err)
	}
	stub := startPTRStub(t)
	nowhere := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))

	for _, zone := range []string{"in-addr.arpa", "10.in-addr.arpa"} {
		t.Run(zone, func(t *testing.T) {
			addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
			startClusterDNS(t, ctx, addr, kubeconfig, []string{nowhere}, []corefile.StubDomain{{Domain: zone, Upstreams: []string{stub}}})
			for _, tc := range []struct{ name, want string }{
				{svcPTR, "svc1.default.svc.cluster.local."},
				{"5.2.0.10.in-addr.arpa.", "forwarded.example."}, // in 10/8, no Service
			} {
				m := new(dns.Msg)
				m.SetQuestion(tc.name, dns.TypePTR)
				var resp *dns.Msg
				c := &dns.Client{Timeout: 3 * time.Second}
				// The kubernetes plugin answers once its informers synced.
				// The answer is checked below; the poll only waits for one.
				_ = testkit.Until(t.Context(), 50*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
					resp, _, err = c.Exchange(m, addr)
					return err == nil && len(resp.Answer) == 1, nil
				})
				if err != nil {
					t.Fatalf("PTR %s: %v", tc.name, err)
				}
				if len(resp.Answer) != 1 || resp.Answer[0].(*dns.PTR).Ptr != tc.want {
					t.Errorf("PTR %s: %v, want %s", tc.name, resp, tc.want)
				}
			}
		})
	}
}
