package operator

import (
	"context"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// fakeChecker rejects Corefiles that mention reject.example, standing in
// for a Corefile CoreDNS refuses (the real dry load needs a child process).
type fakeChecker struct {
	mu    sync.Mutex
	calls int
}

func (f *fakeChecker) Check(_ context.Context, corefile []byte) error {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if strings.Contains(string(corefile), "reject.example") {
		return &CorefileError{Reason: "Corefile:2 - Error during parsing: rejected for the test"}
	}
	return nil
}

func (f *fakeChecker) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func TestControllerAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	dnsClient, err := versioned.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	_, serviceRange, _ := net.ParseCIDR("10.96.0.0/12")
	checker := &fakeChecker{}
	c, err := NewController(Config{ServiceRange: serviceRange, Checker: checker, Logger: slog.New(slog.DiscardHandler)}, ts.Client, dnsClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	dnses := dnsClient.OperatorV1().DNSes()
	cms := ts.Client.CoreV1().ConfigMaps(Namespace)
	dss := ts.Client.AppsV1().DaemonSets(Namespace)
	getDNS := func() *operatorv1.DNS {
		t.Helper()
		d, err := dnses.Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	corefile := func() string {
		cm, err := cms.Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return cm.Data[CorefileKey]
	}

	// The DNS is created with defaults, and the objects follow.
	waitFor(t, "the operator's objects and status", func() (bool, error) {
		d, err := dnses.Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.ClusterIP == "10.96.0.10" && d.Status.ObservedGeneration == d.Generation &&
			meta.FindStatusCondition(d.Status.Conditions, operatorv1.DNSAvailable) != nil, nil
	})
	if d := getDNS(); d.Spec.ManagementState != operatorv1.Managed || d.Status.ClusterDomain != "cluster.local" {
		t.Fatalf("DNS default: %+v", d)
	}
	if cf := corefile(); !strings.Contains(cf, "kubernetes cluster.local in-addr.arpa ip6.arpa") {
		t.Fatalf("Corefile:\n%s", cf)
	}
	svc, err := ts.Client.CoreV1().Services(Namespace).Get(ctx, Name, metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != "10.96.0.10" {
		t.Fatalf("Service: %v %v", svc, err)
	}
	ds, err := dss.Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ds.Spec.Template.Annotations[CorefileHashAnnotation], CorefileHash([]byte(corefile())); got != want {
		t.Fatalf("pod template hash %q, want %q", got, want)
	}
	// Nothing runs the DaemonSet's pods here.
	if a := meta.FindStatusCondition(getDNS().Status.Conditions, operatorv1.DNSAvailable); a.Status != metav1.ConditionFalse {
		t.Fatalf("Available %+v without pods", a)
	}

	// The daemon controller's report makes it available.
	ds.Status.DesiredNumberScheduled, ds.Status.UpdatedNumberScheduled, ds.Status.NumberAvailable = 1, 1, 1
	ds.Status.ObservedGeneration = ds.Generation
	if _, err := dss.UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Available", func() (bool, error) {
		return meta.IsStatusConditionTrue(getDNS().Status.Conditions, operatorv1.DNSAvailable), nil
	})

	// A resync with no change writes nothing.
	rvs := func() [4]string {
		svc, _ := ts.Client.CoreV1().Services(Namespace).Get(ctx, Name, metav1.GetOptions{})
		cm, _ := cms.Get(ctx, Name, metav1.GetOptions{})
		ds, _ := dss.Get(ctx, Name, metav1.GetOptions{})
		return [4]string{getDNS().ResourceVersion, cm.ResourceVersion, svc.ResourceVersion, ds.ResourceVersion}
	}
	before := rvs()
	for range 3 {
		if err := c.rec.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if after := rvs(); after != before {
		t.Fatalf("resync wrote: resourceVersions %v -> %v", before, after)
	}

	// A forwarder is published and rolls the pods.
	update := func(f func(*operatorv1.DNS)) {
		t.Helper()
		// The operator writes the status concurrently: retry on conflict.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d := getDNS()
			f(d)
			_, err := dnses.Update(ctx, d, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	update(func(d *operatorv1.DNS) {
		d.Spec.PluginConfig.ForwardPlugins = []operatorv1.ForwardPlugin{{Domain: "foo.com", NameServers: []string{"127.0.0.1:5301"}}}
	})
	waitFor(t, "the forwarder published", func() (bool, error) { return strings.Contains(corefile(), "foo.com:5353"), nil })
	waitFor(t, "the pods rolled", func() (bool, error) {
		ds, err := dss.Get(ctx, Name, metav1.GetOptions{})
		return err == nil && ds.Spec.Template.Annotations[CorefileHashAnnotation] == CorefileHash([]byte(corefile())), err
	})

	// A Corefile that does not load is never published.
	good := corefile()
	calls := checker.count()
	update(func(d *operatorv1.DNS) {
		d.Spec.PluginConfig.ForwardPlugins = append(d.Spec.PluginConfig.ForwardPlugins,
			operatorv1.ForwardPlugin{Domain: "reject.example", NameServers: []string{"127.0.0.1"}})
	})
	waitFor(t, "Degraded CorefileRejected", func() (bool, error) {
		d := meta.FindStatusCondition(getDNS().Status.Conditions, operatorv1.DNSDegraded)
		return d != nil && d.Status == metav1.ConditionTrue && d.Reason == "CorefileRejected" &&
			strings.Contains(d.Message, "rejected for the test"), nil
	})
	if corefile() != good {
		t.Fatal("a rejected Corefile was published")
	}
	if err := c.rec.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if n := checker.count(); n != calls+1 {
		t.Errorf("the rejected Corefile was checked %d times, want once", n-calls)
	}

	// Unmanaged: the spec change is not published, the status still is.
	update(func(d *operatorv1.DNS) {
		d.Spec.ManagementState = operatorv1.Unmanaged
		d.Spec.PluginConfig.ForwardPlugins = []operatorv1.ForwardPlugin{{Domain: "bar.com", NameServers: []string{"127.0.0.1"}}}
	})
	waitFor(t, "the status of the Unmanaged generation", func() (bool, error) {
		d := getDNS()
		return d.Status.ObservedGeneration == d.Generation, nil
	})
	if corefile() != good {
		t.Fatal("an Unmanaged DNS changed the Corefile")
	}

	// Deleted managed objects come back once Managed again.
	update(func(d *operatorv1.DNS) { d.Spec.ManagementState = operatorv1.Managed })
	waitFor(t, "bar.com published once Managed", func() (bool, error) {
		return strings.Contains(corefile(), "bar.com:5353"), nil
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return cms.Delete(ctx, Name, metav1.DeleteOptions{}) }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ConfigMap recreated with bar.com", func() (bool, error) {
		return strings.Contains(corefile(), "bar.com:5353"), nil
	})
	_, err = cms.Get(ctx, Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		t.Fatal("ConfigMap missing")
	}
}

// TestControllerFallbackCorefile: a stored DNS whose Corefile never loads
// gets the default spec's Corefile published, so the cluster DNS (and
// `up`, which waits for it) has one, and Degraded says why.
func TestControllerFallbackCorefile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	dnsClient, err := versioned.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = dnsClient.OperatorV1().DNSes().Create(ctx, &operatorv1.DNS{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
			{Domain: "reject.example", NameServers: []string{"127.0.0.1"}},
			{Domain: "tls.example", NameServers: []string{"127.0.0.1"}, TransportConfig: &operatorv1.DNSTransportConfig{
				Transport: operatorv1.TLSTransport, TLS: &operatorv1.DNSOverTLSConfig{ServerName: "dns.tls.example",
					CABundle: &operatorv1.ConfigMapNameReference{Name: "missing-ca"}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, serviceRange, _ := net.ParseCIDR("10.96.0.0/12")
	c, err := NewController(Config{ServiceRange: serviceRange, Checker: &fakeChecker{}, Logger: slog.New(slog.DiscardHandler)}, ts.Client, dnsClient)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	want, _, err := render.Corefile(&operatorv1.DNSSpec{}, render.Options{CABundles: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the default Corefile published", func() (bool, error) {
		cm, err := ts.Client.CoreV1().ConfigMaps(Namespace).Get(ctx, Name, metav1.GetOptions{})
		return err == nil && cm.Data[CorefileKey] == string(want), err
	})
	waitFor(t, "Degraded CorefileRejected naming the fallback", func() (bool, error) {
		d, err := dnsClient.OperatorV1().DNSes().Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(d.Status.Conditions, operatorv1.DNSDegraded)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == "CorefileRejected" &&
			strings.Contains(c.Message, "the Corefile of the default DNS spec is served") && strings.Contains(c.Message, "rejected for the test") &&
			strings.Contains(c.Message, "missing-ca"), nil
	})

	// Events on the DNS, once per transition: more passes add none.
	events := func() map[string]int32 {
		list, err := ts.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int32{}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "DNS" && e.InvolvedObject.Name == "default" && e.Source.Component == EventComponent {
				out[e.Type+"/"+e.Reason] += e.Count
			}
		}
		return out
	}
	wantEvents := map[string]int32{"Normal/CorefilePublished": 1, "Warning/CorefileRejected": 1, "Warning/ForwarderSkipped": 1}
	waitFor(t, "the events", func() (bool, error) {
		got := events()
		return len(got) == 3 && got["Normal/CorefilePublished"] >= 1 && got["Warning/CorefileRejected"] >= 1 && got["Warning/ForwarderSkipped"] >= 1, nil
	})
	for range 3 {
		// Run's own pass may be writing the status at the same time; a
		// conflict is retried, as the controller's queue does.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return c.rec.Reconcile(ctx) }); err != nil {
			t.Fatal(err)
		}
	}
	// The broadcaster writes asynchronously but in order (one sink goroutine
	// per watcher, client-go's record.EventBroadcaster): once a marker
	// recorded after the passes is written, so is anything they recorded.
	dns, err := dnsClient.OperatorV1().DNSes().Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const marker = "Normal/TestMarker"
	c.rec.cfg.Recorder.Event(dns, corev1.EventTypeNormal, "TestMarker", "after the passes")
	waitFor(t, "the marker event", func() (bool, error) { return events()[marker] == 1, nil })
	got := events()
	delete(got, marker)
	if !reflect.DeepEqual(got, wantEvents) {
		t.Errorf("events after more passes = %v, want %v", got, wantEvents)
	}
}
