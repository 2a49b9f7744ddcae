package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// HealthFailuresMetric is the counter CoreDNS's proxy package increments
// for each failed health check of a nameserver
// (plugin/pkg/proxy/metrics.go), labelled proxy_name (the plugin: forward)
// and to (the nameserver's address).
const HealthFailuresMetric = "coredns_proxy_healthcheck_failures_total"

// forwardFailures reads the forward plugin's health-check failure counts
// by nameserver address out of metric families.
func forwardFailures(mfs []*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != HealthFailuresMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			var proxy, to string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "proxy_name":
					proxy = l.GetValue()
				case "to":
					to = l.GetValue()
				}
			}
			if proxy != "forward" || to == "" {
				continue
			}
			out[to] += m.GetCounter().GetValue()
		}
	}
	return out
}

// GathererSource reads the counters from a Prometheus registry of this
// process: the in-process cluster DNS of `dnsplane up`, whose CoreDNS
// registers its metrics in prometheus.DefaultRegisterer whether or not
// its Corefile exports them. The node cache `up` runs in the same process
// forwards with the same plugin, so its health checks of the same
// upstream resolvers count in the same series.
type GathererSource struct {
	Gatherer prometheus.Gatherer
	// Instance names the instance in FailureCounts.
	Instance string
}

// Scrape implements HealthSource.
func (g GathererSource) Scrape(context.Context) (FailureCounts, error) {
	mfs, err := g.Gatherer.Gather()
	if err != nil && len(mfs) == 0 {
		return nil, fmt.Errorf("gathering metrics: %w", err)
	}
	return FailureCounts{g.Instance: forwardFailures(mfs)}, nil
}

// MetricsScraper reads the counters from the Prometheus text endpoints of
// the cluster DNS instances.
type MetricsScraper struct {
	// URLs lists the endpoints to scrape, each an instance.
	URLs func(ctx context.Context) ([]string, error)
	// Client is the HTTP client; nil means one with a 5s timeout.
	Client *http.Client
}

// StaticURLs are always the same endpoints (`dnsplane operator
// --metrics-url`).
func StaticURLs(urls []string) func(context.Context) ([]string, error) {
	return func(context.Context) ([]string, error) { return urls, nil }
}

// PodURLs are the metrics endpoints (port 9153) of the running pods the
// operator's DaemonSet selects, read from an informer cache of the pods of
// dnsplane-system.
func PodURLs(pods corelisters.PodLister) func(context.Context) ([]string, error) {
	sel := k8slabels.SelectorFromSet(labels())
	return func(context.Context) ([]string, error) {
		ps, err := pods.Pods(Namespace).List(sel)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("no pod of %s/%s found (is the operator allowed to list pods there?)", Namespace, Name)
		}
		var urls []string
		for _, p := range ps {
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
				continue
			}
			urls = append(urls, "http://"+net.JoinHostPort(p.Status.PodIP, strconv.Itoa(podMetricsPort))+"/metrics")
		}
		return urls, nil
	}
}

// Scrape implements HealthSource. An endpoint that cannot be read is left
// out (its instance keeps its last counts until it answers again); the
// error is returned only when none could be read.
func (s MetricsScraper) Scrape(ctx context.Context) (FailureCounts, error) {
	urls, err := s.URLs(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the cluster DNS's metrics endpoints: %w", err)
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	out := FailureCounts{}
	var errs []error
	for _, u := range urls {
		counts, err := scrapeOne(ctx, client, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[u] = counts
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func scrapeOne(ctx context.Context, client *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	mfs := make([]*dto.MetricFamily, 0, len(fams))
	for _, mf := range fams {
		mfs = append(mfs, mf)
	}
	return forwardFailures(mfs), nil
}
