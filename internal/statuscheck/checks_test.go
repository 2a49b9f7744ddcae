package statuscheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/upctl"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// check runs c and compares its outcome with want (a message) or wantErr
// (part of the error); wantStopped says the error is ErrStopped.
func check(t *testing.T, c Check, want, wantErr string, wantStopped bool) {
	t.Helper()
	got, err := c.Check(ctxFor(t, 2*time.Second))
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%s: %v, want %q", c.Name(), err, want)
	case wantErr == "" && !strings.Contains(got, want):
		t.Errorf("%s: %q, want %q", c.Name(), got, want)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("%s: %q, %v; want an error with %q", c.Name(), got, err, wantErr)
	case err != nil && errors.Is(err, ErrStopped) != wantStopped:
		t.Errorf("%s: %v: ErrStopped %v, want %v", c.Name(), err, !wantStopped, wantStopped)
	}
}

// TestReady against an HTTP server answering as the API server's health
// endpoints do (internal/apiserver/health.go).
func TestReady(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/failing/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("[+]ping ok\n[-]etcd failed: reason withheld\n[-]informer-sync failed: reason withheld\nreadyz check failed\n"))
	})
	mux.HandleFunc("/readyz/etcd", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal server error: etcd: context deadline exceeded\n"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	closed := httptest.NewServer(mux)
	closed.Close()
	tests := []struct {
		name, url, want, wantErr string
	}{
		{name: "ready", url: srv.URL + "/readyz", want: "ok"},
		{name: "failing checks named", url: srv.URL + "/failing/readyz", wantErr: "500 Internal Server Error: etcd failed: reason withheld, informer-sync failed: reason withheld"},
		{name: "one check's reason", url: srv.URL + "/readyz/etcd", wantErr: "500 Internal Server Error: internal server error: etcd: context deadline exceeded"},
		{name: "nothing listens", url: closed.URL + "/readyz", wantErr: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			check(t, Ready{Label: "apiserver", URL: tt.url, Client: srv.Client()}, tt.want, tt.wantErr, false)
		})
	}
}

func TestRunning(t *testing.T) {
	t.Parallel()
	list := []upctl.ComponentStatus{{Name: "controllers", Running: true}, {Name: "scheduler", Error: "scheduler: lease lost"}, {Name: "dns-operator"}}
	tests := []struct {
		name    string
		listErr error
		want    string
		wantErr string
	}{
		{name: "controllers", want: "running"},
		{name: "scheduler", wantErr: "not running: scheduler: lease lost (the log of dnsplane up has more)"},
		{name: "dns-operator", wantErr: "not running: dnsplane up is stopping"},
		{name: "other", wantErr: "dnsplane up runs no other"},
		{name: "controllers", listErr: errors.New("timeout"), wantErr: "unknown: timeout"},
	}
	for _, tt := range tests {
		check(t, Running{Label: tt.name, Components: list, ListErr: tt.listErr}, tt.want, tt.wantErr, false)
	}
}

func TestOperator(t *testing.T) {
	t.Parallel()
	dnsWith := func(conds ...metav1.Condition) func(context.Context) (*operatorv1.DNS, error) {
		return func(context.Context) (*operatorv1.DNS, error) {
			return &operatorv1.DNS{Status: operatorv1.DNSStatus{Conditions: conds}}, nil
		}
	}
	running := Running{Label: "dns-operator", Components: []upctl.ComponentStatus{{Name: "dns-operator", Running: true}}}
	tests := []struct {
		name          string
		comp          Running
		dns           func(context.Context) (*operatorv1.DNS, error)
		want, wantErr string
	}{
		{name: "healthy", comp: running, dns: dnsWith(metav1.Condition{Type: operatorv1.DNSAvailable, Status: metav1.ConditionTrue},
			metav1.Condition{Type: operatorv1.DNSDegraded, Status: metav1.ConditionFalse}), want: "running, DNS default not degraded"},
		{name: "degraded", comp: running, dns: dnsWith(metav1.Condition{Type: operatorv1.DNSDegraded, Status: metav1.ConditionTrue,
			Reason: "InvalidForwardPlugin", Message: "spec.forwardPlugins[0]: left out"}),
			wantErr: "DNS default is Degraded (InvalidForwardPlugin): spec.forwardPlugins[0]: left out"},
		{name: "not available", comp: running, dns: dnsWith(metav1.Condition{Type: operatorv1.DNSAvailable, Status: metav1.ConditionFalse,
			Reason: "NoPods", Message: "none ready"}), wantErr: "not Available (NoPods): none ready"},
		{name: "no DNS resource", comp: running, dns: func(context.Context) (*operatorv1.DNS, error) { return nil, errors.New("not found") },
			wantErr: "running, but reading the DNS resource: not found"},
		{name: "not running", comp: Running{Label: "dns-operator"}, wantErr: "dnsplane up runs no dns-operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			check(t, Operator{Running: tt.comp, DNS: tt.dns}, tt.want, tt.wantErr, false)
		})
	}
}

// dnsServer serves cluster.local's SOA on 127.0.0.1 over UDP, REFUSED for
// anything else, until the test ends.
func dnsServer(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if r.Question[0].Name == "cluster.local." {
			soa, _ := dns.NewRR("cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5")
			m.Answer = append(m.Answer, soa)
		} else {
			m.Rcode = dns.RcodeRefused
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

func TestDNSQuery(t *testing.T) {
	t.Parallel()
	addr := dnsServer(t)
	// A bound socket that never answers: the query times out.
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	stopped := fmt.Errorf("%w with dnsplane node stop", ErrStopped)
	tests := []struct {
		name        string
		q           DNSQuery
		want        string
		wantErr     string
		wantStopped bool
	}{
		{name: "answers", q: DNSQuery{Addr: addr, QName: "cluster.local.", QType: dns.TypeSOA}, want: addr + " answers cluster.local. SOA in "},
		{name: "refuses", q: DNSQuery{Addr: addr, QName: "example.", QType: dns.TypeSOA}, wantErr: "example. SOA @" + addr + ": REFUSED with 0 answers, want NOERROR with an answer"},
		{name: "silent", q: DNSQuery{Addr: silent.LocalAddr().String(), QName: "cluster.local.", QType: dns.TypeSOA}, wantErr: "timeout"},
		{name: "stopped node", q: DNSQuery{Addr: addr, QName: "cluster.local.", QType: dns.TypeSOA, StoppedErr: stopped}, wantErr: "stopped with", wantStopped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.q.Label = "cluster-dns"
			check(t, tt.q, tt.want, tt.wantErr, tt.wantStopped)
		})
	}
}

// TestAgent reads the Node and Lease through client-go, from upstream's
// fake clientset.
func TestAgent(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	node := func(name string, ready corev1.ConditionStatus) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if ready != "" {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}}
		}
		return n
	}
	lease := func(name string, age time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &metav1.MicroTime{Time: now.Add(-age)}}}
	}
	reader := clientReader{fake.NewClientset(
		node("ready", corev1.ConditionTrue), lease("ready", 3*time.Second),
		node("unknown", corev1.ConditionUnknown), lease("unknown", time.Minute),
		node("stuck", corev1.ConditionTrue), lease("stuck", 41*time.Second),
		node("new", ""),
		node("no-lease", corev1.ConditionTrue),
	)}
	tests := []struct {
		node        string
		stopped     error
		want        string
		wantErr     string
		wantStopped bool
	}{
		{node: "ready", want: "Ready, lease renewed 3s ago"},
		{node: "unknown", wantErr: "node unknown Ready=Unknown (NodeStatusUnknown): Kubelet stopped posting node status."},
		{node: "stuck", wantErr: "its lease was last renewed 41s ago (it lasts 40s)"},
		{node: "new", wantErr: "no Ready condition yet"},
		{node: "no-lease", wantErr: "lease kube-node-lease/no-lease: leases.coordination.k8s.io \"no-lease\" not found"},
		{node: "gone", wantErr: "node gone: nodes \"gone\" not found"},
		{node: "ready", stopped: fmt.Errorf("%w with dnsplane node stop", ErrStopped), wantErr: "stopped with", wantStopped: true},
	}
	for _, tt := range tests {
		check(t, Agent{Node: tt.node, Reader: reader, StoppedErr: tt.stopped, Now: func() time.Time { return now }}, tt.want, tt.wantErr, tt.wantStopped)
	}
}
