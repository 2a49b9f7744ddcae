package coredns

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestRunFromConfigMap serves a Corefile from a ConfigMap in dnsplane's own
// API server and checks that an update is applied, that a broken Corefile
// is counted and never replaces the running one, and that removing the key
// or the ConfigMap keeps the last good configuration serving.
func TestRunFromConfigMap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	_, cs := startAPIServer(t, ctx)
	const ns, name = "dnsplane-system", "dns-default"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace: %v", err)
	}

	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	corefile := func(ip string) string {
		return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    hosts {\n        %s a.example\n    }\n}\n", port, ip)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	update := func(data map[string]string) {
		t.Helper()
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("getting ConfigMap: %v", err)
		}
		cm.Data = data
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating ConfigMap: %v", err)
		}
	}

	failures0 := failures(t)
	runErr := make(chan error, 1)
	go func() { runErr <- RunFromConfigMap(ctx, cs, ns, name, nil) }()

	c := &dns.Client{Net: "udp", Timeout: time.Second}
	answer := func() string {
		m := new(dns.Msg)
		m.SetQuestion("a.example.", dns.TypeA)
		r, _, err := c.Exchange(m, addr)
		if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
			return ""
		}
		if a, ok := r.Answer[0].(*dns.A); ok {
			return a.A.String()
		}
		return ""
	}
	poll := func(want string) {
		t.Helper()
		testkit.PollEvery(t, "a.example A "+want, 50*time.Millisecond, 20*time.Second, func(context.Context) (bool, error) {
			got := answer()
			return got == want, fmt.Errorf("a.example A = %q", got)
		})
	}
	// stays checks the answer stays want for a while.
	stays := func(want string) {
		t.Helper()
		for range 10 {
			if got := answer(); got != want {
				t.Fatalf("a.example A = %q; want %q", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Missing ConfigMap: RunFromConfigMap waits.
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-runErr:
		t.Fatalf("RunFromConfigMap returned %v with the ConfigMap missing", err)
	default:
	}

	if _, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{CorefileKey: corefile("10.0.0.1")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ConfigMap: %v", err)
	}
	poll("10.0.0.1")

	update(map[string]string{CorefileKey: corefile("10.0.0.2")})
	poll("10.0.0.2")

	update(map[string]string{CorefileKey: fmt.Sprintf(".:%d {\n    unknowndirective\n}\n", port)})
	// The count checked below; the poll only waits for it to move.
	_ = testkit.Until(t.Context(), 50*time.Millisecond, 20*time.Second, func(context.Context) (bool, error) {
		return failures(t)-failures0 >= 1, nil
	})
	if got := failures(t) - failures0; got != 1 {
		t.Fatalf("dnsplane_dns_config_load_failures_total rose by %v; want 1", got)
	}
	stays("10.0.0.2")

	update(map[string]string{"other": "x"})
	stays("10.0.0.2")

	// The key comes back with a good Corefile: applied again.
	update(map[string]string{CorefileKey: corefile("10.0.0.3")})
	poll("10.0.0.3")

	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting ConfigMap: %v", err)
	}
	stays("10.0.0.3")
	if got := failures(t) - failures0; got != 1 {
		t.Fatalf("dnsplane_dns_config_load_failures_total rose by %v; want 1", got)
	}

	cancel()
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatalf("RunFromConfigMap: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunFromConfigMap did not return after cancel")
	}
	// The port is free again once it returned.
	c2 := &dns.Client{Net: "udp", Timeout: 300 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion("a.example.", dns.TypeA)
	if r, _, err := c2.Exchange(m, addr); err == nil {
		t.Fatalf("still answering after RunFromConfigMap returned: %v", r)
	}
}

// failures reads dnsplane_dns_config_load_failures_total.
func failures(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := configLoadFailures.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
