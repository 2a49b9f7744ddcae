package operator

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// operatorRun is an operator running against a test API server.
type operatorRun struct {
	ts  *controlplanetest.TestServer
	dns versioned.Interface
	c   *Controller
	ctx context.Context
}

// startOperator starts a test API server, creates the DNS "default" with
// spec (and the objects of pre) and runs the operator with cfg.
func startOperator(t *testing.T, cfg Config, spec operatorv1.DNSSpec, pre ...*corev1.ConfigMap) *operatorRun {
	t.Helper()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	dnsClient, err := versioned.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if len(pre) > 0 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
		if _, err := ts.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, cm := range pre {
		if _, err := ts.Client.CoreV1().ConfigMaps(Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dnsClient.OperatorV1().DNSes().Create(ctx, &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, serviceRange, _ := net.ParseCIDR("10.96.0.0/12")
	cfg.ServiceRange = serviceRange
	cfg.Logger = slog.New(slog.DiscardHandler)
	c, err := NewController(cfg, ts.Client, dnsClient)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return &operatorRun{ts: ts, dns: dnsClient, c: c, ctx: ctx}
}

func (o *operatorRun) corefile() string {
	cm, err := o.ts.Client.CoreV1().ConfigMaps(Namespace).Get(o.ctx, Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return cm.Data[CorefileKey]
}

func (o *operatorRun) get(t *testing.T) *operatorv1.DNS {
	t.Helper()
	d, err := o.dns.OperatorV1().DNSes().Get(o.ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// degraded waits for Degraded True with reason and a message holding msg.
func (o *operatorRun) degraded(t *testing.T, reason, msg string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	waitFor(t, "Degraded "+reason, func() (bool, error) {
		c = meta.FindStatusCondition(o.get(t).Status.Conditions, operatorv1.DNSDegraded)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason && strings.Contains(c.Message, msg), nil
	})
	return c
}

// events are the operator's events on the DNS, by type/reason, with
// their messages.
func (o *operatorRun) events(t *testing.T) map[string][]string {
	t.Helper()
	list, err := o.ts.Client.CoreV1().Events("default").List(o.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "DNS" && e.Source.Component == EventComponent {
			out[e.Type+"/"+e.Reason] = append(out[e.Type+"/"+e.Reason], e.Message)
		}
	}
	return out
}

func (o *operatorRun) waitEvent(t *testing.T, typeReason, msg string) {
	t.Helper()
	waitFor(t, "event "+typeReason, func() (bool, error) {
		for _, m := range o.events(t)[typeReason] {
			if strings.Contains(m, msg) {
				return true, nil
			}
		}
		return false, nil
	})
}

// swapChecker is a Checker whose checker the test replaces.
type swapChecker struct {
	mu    sync.Mutex
	c     Checker
	calls int
}

func (s *swapChecker) Check(ctx context.Context, corefile []byte) error {
	s.mu.Lock()
	c := s.c
	s.calls++
	s.mu.Unlock()
	return c.Check(ctx, corefile)
}

func (s *swapChecker) set(c Checker) {
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

func (s *swapChecker) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// TestControllerDryLoadFailureIsRetried: a dry-load child that cannot
// start says nothing about the Corefile. The operator reports it as
// DryLoadFailed (condition and event), retries with backoff, and
// publishes the same Corefile once the child runs; a bad Corefile is
// still rejected. Before, the failure was remembered as "this Corefile
// does not load" (Degraded CorefileRejected) and the Corefile was never
// checked again.
func TestControllerDryLoadFailureIsRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	missing := ExecChecker{Path: "/nonexistent/dnsplane", Args: []string{"corefile-check"}}
	checker := &swapChecker{c: missing}
	o := startOperator(t, Config{Checker: checker}, operatorv1.DNSSpec{})

	c := o.degraded(t, "DryLoadFailed", "/nonexistent/dnsplane")
	if !strings.Contains(c.Message, "retrying with backoff") {
		t.Errorf("Degraded message %q does not say it retries", c.Message)
	}
	o.waitEvent(t, "Warning/DryLoadFailed", "/nonexistent/dnsplane")
	if got := o.events(t)["Warning/CorefileRejected"]; len(got) != 0 {
		t.Errorf("a dry load that did not run rejected the Corefile: %v", got)
	}
	if cf := o.corefile(); cf != "" {
		t.Fatalf("published without a dry load:\n%s", cf)
	}
	// Retried: the checker is run again without any change to the DNS.
	n := checker.count()
	waitFor(t, "a retry", func() (bool, error) { return checker.count() > n, nil })

	// The child runs again: the same Corefile is published.
	checker.set(dryLoadChecker(t))
	waitFor(t, "the Corefile published", func() (bool, error) { return o.corefile() != "", nil })
	waitFor(t, "Degraded no longer DryLoadFailed", func() (bool, error) {
		c := meta.FindStatusCondition(o.get(t).Status.Conditions, operatorv1.DNSDegraded)
		return c != nil && c.Reason != "DryLoadFailed" && !strings.Contains(c.Message, "could not be checked"), nil
	})

	// A truly bad Corefile, through the same child (a CA bundle that is
	// no certificate: CoreDNS's forward setup refuses it): rejected, and
	// remembered, not retried.
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad-ca", Namespace: Namespace}, Data: map[string]string{"ca-bundle.crt": "not a certificate"}}
	if _, err := o.ts.Client.CoreV1().ConfigMaps(Namespace).Create(o.ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	good := o.corefile()
	d := o.get(t)
	d.Spec.PluginConfig.ForwardPlugins = []operatorv1.ForwardPlugin{{Domain: "tls.example", NameServers: []string{"192.0.2.1"},
		TransportConfig: &operatorv1.DNSTransportConfig{Transport: operatorv1.TLSTransport, TLS: &operatorv1.DNSOverTLSConfig{
			ServerName: "dns.tls.example", CABundle: &operatorv1.ConfigMapNameReference{Name: "bad-ca"}}}}}
	if _, err := o.dns.OperatorV1().DNSes().Update(o.ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o.degraded(t, "CorefileRejected", "Corefile does not load")
	o.waitEvent(t, "Warning/CorefileRejected", "does not load")
	n = checker.count()
	for range 3 {
		if err := o.c.rec.Reconcile(o.ctx); err != nil && !apierrors.IsConflict(err) {
			t.Fatalf("Reconcile of a rejected Corefile = %v, want nil (no retry)", err)
		}
	}
	if got := checker.count(); got != n {
		t.Errorf("the rejected Corefile was dry-loaded %d more times, want 0", got-n)
	}
	if o.corefile() != good {
		t.Error("a rejected Corefile was published")
	}
}

// TestControllerStandalonePublishes: an operator outside the cluster
// (the dry-load child has no KUBERNETES_SERVICE_HOST and no service
// account) publishes the Corefile it publishes in a cluster, the
// kubernetes plugin reading the API with the pod's service account.
// Before, the dry load failed on rest.InClusterConfig and nothing was
// ever published.
func TestControllerStandalonePublishes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	spec := operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
		{Domain: "corp.example", NameServers: []string{"192.0.2.53"}}}}}
	o := startOperator(t, Config{Checker: dryLoadChecker(t)}, spec)
	waitFor(t, "the Corefile published", func() (bool, error) { return o.corefile() != "", nil })
	want, _, err := render.Corefile(&o.get(t).Spec, render.Options{CABundles: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.corefile(); got != string(want) {
		t.Errorf("published Corefile:\n%s\nwant the cluster's:\n%s", got, want)
	}
	if strings.Contains(o.corefile(), "endpoint") {
		t.Error("the published Corefile names an endpoint: the check's stand-in leaked into it")
	}
}

// staticHealth is a HealthSource whose counters never move.
type staticHealth FailureCounts

func (s staticHealth) Scrape(context.Context) (FailureCounts, error) { return FailureCounts(s), nil }

// TestControllerUpstreamsArePublishedOnes: a TLS forwarder whose CA
// bundle is missing is left out of the Corefile, so its nameserver is
// not in status.upstreams (before, it was listed as healthy).
func TestControllerUpstreamsArePublishedOnes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	spec := operatorv1.DNSSpec{
		PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
			{Domain: "ok.example", NameServers: []string{"192.0.2.10"}},
			{Domain: "tls.example", NameServers: []string{"192.0.2.20"}, TransportConfig: &operatorv1.DNSTransportConfig{
				Transport: operatorv1.TLSTransport, TLS: &operatorv1.DNSOverTLSConfig{ServerName: "dns.tls.example",
					CABundle: &operatorv1.ConfigMapNameReference{Name: "missing-ca"}}}},
		}},
		UpstreamResolvers: operatorv1.UpstreamResolvers{Upstreams: []operatorv1.Upstream{{Type: operatorv1.NetworkResolverType, Address: "192.0.2.30"}}},
	}
	o := startOperator(t, Config{Checker: &fakeChecker{}, Health: staticHealth{}}, spec)
	var got []operatorv1.UpstreamStatus
	waitFor(t, "status.upstreams", func() (bool, error) {
		got = o.get(t).Status.Upstreams
		return len(got) > 0, nil
	})
	var listed []string
	for _, u := range got {
		listed = append(listed, u.Domain+" "+u.Address)
	}
	if want := []string{"ok.example 192.0.2.10:53", ". 192.0.2.30:53"}; strings.Join(listed, ",") != strings.Join(want, ",") {
		t.Errorf("status.upstreams = %q, want %q (the TLS forwarder is not in the Corefile)", listed, want)
	}
	o.degraded(t, "InvalidSpec", "missing-ca")
}

// TestControllerCorefileTooLarge: CA bundles that make the operator's
// ConfigMap larger than the API stores are reported (condition, event)
// instead of a write retried forever; the last good Corefile stays.
func TestControllerCorefileTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	big := strings.Repeat("# a large CA bundle\n", 600<<10/20) // 600 KiB, under a ConfigMap's 1 MiB
	var fps []operatorv1.ForwardPlugin
	var pre []*corev1.ConfigMap
	for _, n := range []string{"ca-a", "ca-b"} {
		pre = append(pre, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: Namespace}, Data: map[string]string{"ca-bundle.crt": big}})
		fps = append(fps, operatorv1.ForwardPlugin{Domain: n + ".example", NameServers: []string{"192.0.2.1"}, TransportConfig: &operatorv1.DNSTransportConfig{
			Transport: operatorv1.TLSTransport, TLS: &operatorv1.DNSOverTLSConfig{ServerName: "dns.example",
				CABundle: &operatorv1.ConfigMapNameReference{Name: n}}}})
	}
	checker := &fakeChecker{}
	o := startOperator(t, Config{Checker: checker}, operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: fps}}, pre...)
	c := o.degraded(t, "CorefileTooLarge", "more than the 1048576 bytes a ConfigMap's data may hold")
	if !strings.Contains(c.Message, "its CA bundles 1228800") {
		t.Errorf("Degraded message %q does not say what is large", c.Message)
	}
	// Nothing was published before: the default spec's Corefile is, without
	// the bundles, rather than nothing.
	def, _, err := render.Corefile(&operatorv1.DNSSpec{}, render.Options{CABundles: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the default Corefile published", func() (bool, error) { return o.corefile() == string(def), nil })
	o.degraded(t, "CorefileTooLarge", "none was before: the Corefile of the default DNS spec is served")
	cm, err := o.ts.Client.CoreV1().ConfigMaps(Namespace).Get(o.ctx, Name, metav1.GetOptions{})
	if err != nil || len(cm.Data) != 1 {
		t.Errorf("the default Corefile's ConfigMap has keys %v (%v), want the Corefile alone", len(cm.Data), err)
	}
	o.waitEvent(t, "Warning/CorefileTooLarge", "1048576")
	for range 3 {
		// The controller writes the status too: a conflict is a race
		// with it, not a retry of the write.
		if err := o.c.rec.Reconcile(o.ctx); err != nil && !apierrors.IsConflict(err) {
			t.Fatalf("Reconcile = %v, want nil: no retry can store it", err)
		}
	}
	if n := checker.count(); n != 1 {
		t.Errorf("dry loads: %d, want 1 (the default Corefile; never the one that cannot be stored)", n)
	}
	if got := o.events(t)["Warning/CorefileTooLarge"]; len(got) != 1 {
		t.Errorf("CorefileTooLarge events = %d, want 1", len(got))
	}
}
