package operator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

func TestOperatorHealthTracker(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	type step struct {
		counts      FailureCounts
		wantChanged bool
		want        map[string]bool // address → healthy
		wantFails   map[string]float64
	}
	const a, b = "192.0.2.1:53", "192.0.2.2:53"
	tests := []struct {
		name  string
		steps []step
	}{
		{"first scrape is a baseline", []step{
			{counts: FailureCounts{"i": {a: 7}}, want: map[string]bool{a: true}},
		}},
		{"rise between two scrapes is unhealthy, no rise for an interval is healthy", []step{
			{counts: FailureCounts{"i": {a: 0, b: 0}}, want: map[string]bool{a: true, b: true}},
			{counts: FailureCounts{"i": {a: 4, b: 0}}, wantChanged: true, want: map[string]bool{a: false, b: true}, wantFails: map[string]float64{a: 4}},
			{counts: FailureCounts{"i": {a: 24, b: 0}}, want: map[string]bool{a: false, b: true}, wantFails: map[string]float64{a: 4}},
			{counts: FailureCounts{"i": {a: 24, b: 0}}, wantChanged: true, want: map[string]bool{a: true, b: true}},
			{counts: FailureCounts{"i": {a: 24, b: 0}}, want: map[string]bool{a: true, b: true}},
		}},
		{"series appearing on a known instance counts as a rise", []step{
			{counts: FailureCounts{"i": {}}},
			{counts: FailureCounts{"i": {a: 2}}, wantChanged: true, want: map[string]bool{a: false}, wantFails: map[string]float64{a: 2}},
		}},
		{"counter reset (instance restarted) is a baseline", []step{
			{counts: FailureCounts{"i": {a: 10}}, want: map[string]bool{a: true}},
			{counts: FailureCounts{"i": {a: 1}}, want: map[string]bool{a: true}},
		}},
		{"a new instance is a baseline, a rise on any instance is unhealthy", []step{
			{counts: FailureCounts{"p1": {a: 0}}},
			{counts: FailureCounts{"p1": {a: 0}, "p2": {a: 50}}, want: map[string]bool{a: true}},
			{counts: FailureCounts{"p1": {a: 1}, "p2": {a: 53}}, wantChanged: true, want: map[string]bool{a: false}, wantFails: map[string]float64{a: 4}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newHealthTracker()
			for i, s := range tt.steps {
				now := t0.Add(time.Duration(i) * 10 * time.Second)
				if got := tr.observe(now, s.counts); got != s.wantChanged {
					t.Errorf("step %d: changed = %v, want %v", i, got, s.wantChanged)
				}
				h := tr.snapshot()
				for addr, healthy := range s.want {
					if h[addr].Healthy != healthy {
						t.Errorf("step %d: %s healthy = %v, want %v", i, addr, h[addr].Healthy, healthy)
					}
					if !healthy && h[addr].Failures != s.wantFails[addr] {
						t.Errorf("step %d: %s failures = %g, want %g", i, addr, h[addr].Failures, s.wantFails[addr])
					}
				}
			}
		})
	}
}

func TestOperatorUpstreamStatuses(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	later := metav1.NewTime(t0.Add(time.Hour))
	fwds := []render.Forwarder{
		{Domain: "foo.com", Addresses: []string{"192.0.2.1:53", "192.0.2.2:53"}},
		{Domain: ".", Addresses: []string{"198.51.100.1:53"}, ResolvConf: true},
	}
	health := map[string]Health{
		"192.0.2.1:53":    {Healthy: true, Since: t0},
		"192.0.2.2:53":    {Healthy: false, Since: t0.Add(10 * time.Second), Failures: 19},
		"203.0.113.9:53":  {Healthy: true, Since: t0}, // from the resolv.conf
		"198.51.100.1:53": {Healthy: true, Since: t0},
	}
	got := upstreamStatuses(fwds, health, nil, later)
	want := []operatorv1.UpstreamStatus{
		{Domain: "foo.com", Address: "192.0.2.1:53", Healthy: true, LastChecked: metav1.NewTime(t0)},
		{Domain: "foo.com", Address: "192.0.2.2:53", Healthy: false, LastChecked: metav1.NewTime(t0.Add(10 * time.Second)),
			Message: "19 failed health checks since 2026-11-24T12:00:10Z"},
		{Domain: ".", Address: "198.51.100.1:53", Healthy: true, LastChecked: metav1.NewTime(t0)},
		{Domain: ".", Address: "203.0.113.9:53", Healthy: true, LastChecked: metav1.NewTime(t0)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d upstreams, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].LastChecked.Equal(&want[i].LastChecked) || got[i].Domain != want[i].Domain || got[i].Address != want[i].Address ||
			got[i].Healthy != want[i].Healthy || got[i].Message != want[i].Message {
			t.Errorf("upstream %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	msg := unhealthyUpstreams(got)
	if !strings.Contains(msg, "192.0.2.2:53 (domain foo.com): 19 failed health checks") || strings.Contains(msg, "192.0.2.1") {
		t.Errorf("condition message = %q", msg)
	}

	// An unchanged health keeps the old lastChecked: nothing to write.
	old := got
	again := upstreamStatuses(fwds, health, old, metav1.NewTime(t0.Add(2*time.Hour)))
	for i := range again {
		if !again[i].LastChecked.Equal(&old[i].LastChecked) {
			t.Errorf("upstream %d lastChecked moved from %v to %v", i, old[i].LastChecked, again[i].LastChecked)
		}
	}
	// No health read yet: listed healthy, checked now.
	fresh := upstreamStatuses(fwds[:1], nil, nil, later)
	if len(fresh) != 2 || !fresh[0].Healthy || !fresh[0].LastChecked.Equal(&later) {
		t.Errorf("without health: %+v", fresh)
	}
	if unhealthyUpstreams(fresh) != "" {
		t.Errorf("all healthy: message %q", unhealthyUpstreams(fresh))
	}
}

func TestOperatorMetricsScraper(t *testing.T) {
	const body = `# HELP coredns_proxy_healthcheck_failures_total Counter of the number of failed healthchecks.
# TYPE coredns_proxy_healthcheck_failures_total counter
coredns_proxy_healthcheck_failures_total{proxy_name="forward",to="127.0.0.1:5301"} 12
coredns_proxy_healthcheck_failures_total{proxy_name="forward",to="[2001:db8::1]:53"} 1
coredns_proxy_healthcheck_failures_total{proxy_name="grpc",to="127.0.0.1:5301"} 100
# TYPE coredns_forward_healthcheck_broken_total counter
coredns_forward_healthcheck_broken_total 3
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
	defer srv.Close()
	down := "http://127.0.0.1:1/metrics"
	got, err := MetricsScraper{URLs: StaticURLs([]string{srv.URL, down})}.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[srv.URL]["127.0.0.1:5301"] != 12 || got[srv.URL]["[2001:db8::1]:53"] != 1 || len(got[srv.URL]) != 2 {
		t.Errorf("counts = %v", got)
	}
	if _, err := (MetricsScraper{URLs: StaticURLs([]string{down})}).Scrape(context.Background()); err == nil {
		t.Error("no endpoint answered: want an error")
	}
}

func TestOperatorPodURLs(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	urls := PodURLs(corelisters.NewPodLister(idx))
	if _, err := urls(context.Background()); err == nil {
		t.Error("no pods: want an error naming the DaemonSet")
	}
	pod := func(name, ns, ip string, phase corev1.PodPhase, lbls map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
			Status: corev1.PodStatus{Phase: phase, PodIP: ip}}
	}
	for _, p := range []*corev1.Pod{
		pod("a", Namespace, "10.0.0.1", corev1.PodRunning, labels()),
		pod("b", Namespace, "fd00::2", corev1.PodRunning, labels()),
		pod("pending", Namespace, "", corev1.PodPending, labels()),
		pod("other", Namespace, "10.0.0.9", corev1.PodRunning, map[string]string{"app": "x"}),
		pod("elsewhere", "kube-system", "10.0.0.8", corev1.PodRunning, labels()),
	} {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := urls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{"http://10.0.0.1:9153/metrics", "http://[fd00::2]:9153/metrics"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("urls = %v, want %v", got, want)
	}
}
