package operator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// FailureCounts are the values of CoreDNS's forward health-check failure
// counter (coredns_proxy_healthcheck_failures_total{proxy_name="forward"})
// of each cluster DNS instance, by the nameserver address it names (the
// "to" label): instance → address → count.
type FailureCounts map[string]map[string]float64

// HealthSource reads the forward health-check failure counters of the
// cluster DNS instances: the metrics endpoints of the DaemonSet's pods
// (MetricsScraper), or the process's own registry for the in-process
// cluster DNS of `dnsplane up`.
type HealthSource interface {
	Scrape(ctx context.Context) (FailureCounts, error)
}

// Health is a nameserver's health as the operator last saw it.
type Health struct {
	Healthy bool
	// Since is when the operator first saw the current state (the scrape
	// that saw the counter rise, or stop rising).
	Since time.Time
	// Failures are the failed health checks counted from the scrape
	// before the first rise to the scrape that found the nameserver
	// unhealthy (the count is not updated while it stays unhealthy, so
	// that the status is not rewritten every scrape).
	Failures float64
}

// healthTracker turns successive scrapes into each nameserver's health.
// CoreDNS health-checks a nameserver only after a query to it failed, and
// then every 0.5s until a check succeeds; so a nameserver is unhealthy
// when its failure counter rose between two scrapes of one instance, and
// healthy again after a whole scrape interval in which it did not rise on
// any instance. A counter that went down (the instance restarted) is a
// new baseline, not a rise. The first scrape of an instance is only a
// baseline: a nameserver already down is found at the second.
type healthTracker struct {
	mu     sync.Mutex
	last   FailureCounts
	health map[string]Health
}

func newHealthTracker() *healthTracker {
	return &healthTracker{last: FailureCounts{}, health: map[string]Health{}}
}

// observe records a scrape taken at now and reports whether a
// nameserver's health changed (a nameserver seen the first time counts as
// a change only when it is unhealthy).
func (t *healthTracker) observe(now time.Time, counts FailureCounts) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	rose := map[string]float64{}
	for inst, addrs := range counts {
		prev, seen := t.last[inst]
		for addr, v := range addrs {
			if _, ok := t.health[addr]; !ok {
				t.health[addr] = Health{Healthy: true, Since: now}
			}
			if !seen {
				continue
			}
			if p, ok := prev[addr]; ok && v > p {
				rose[addr] += v - p
			} else if !ok && v > 0 {
				// A series that appeared between two scrapes of a known
				// instance: its first health checks failed.
				rose[addr] += v
			}
		}
	}
	t.last = FailureCounts{}
	for inst, addrs := range counts {
		t.last[inst] = maps.Clone(addrs)
	}
	changed := false
	for addr, h := range t.health {
		n, up := rose[addr]
		switch {
		case up && h.Healthy:
			t.health[addr] = Health{Healthy: false, Since: now, Failures: n}
			changed = true
		case !up && !h.Healthy:
			t.health[addr] = Health{Healthy: true, Since: now}
			changed = true
		}
	}
	return changed
}

// snapshot is a copy of the current health by address.
func (t *healthTracker) snapshot() map[string]Health {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.health)
}

// upstreamStatuses lists every nameserver the Corefile forwards to, by
// domain in the renderer's order, with its health. A nameserver the
// operator has no health for yet is healthy. The addresses of a
// resolv.conf the operator cannot read (render.Forwarder.ResolvConf) are
// those the metrics name and no forward plugin does. lastChecked is the
// time of the last change of the nameserver's health (or when it was
// first listed): a status rewritten every scrape would cost a write and a
// watch event every interval for nothing.
func upstreamStatuses(fwds []render.Forwarder, health map[string]Health, old []operatorv1.UpstreamStatus, now metav1.Time) []operatorv1.UpstreamStatus {
	named := map[string]bool{}
	for _, f := range fwds {
		for _, a := range f.Addresses {
			named[a] = true
		}
	}
	var unnamed []string
	for a := range health {
		if !named[a] {
			unnamed = append(unnamed, a)
		}
	}
	sort.Strings(unnamed)
	prev := map[[2]string]operatorv1.UpstreamStatus{}
	for _, u := range old {
		prev[[2]string{u.Domain, u.Address}] = u
	}
	var out []operatorv1.UpstreamStatus
	for _, f := range fwds {
		addrs := f.Addresses
		if f.ResolvConf {
			addrs = append(slices.Clone(addrs), unnamed...)
		}
		for _, a := range addrs {
			h, ok := health[a]
			if !ok {
				h = Health{Healthy: true}
			}
			u := operatorv1.UpstreamStatus{Domain: f.Domain, Address: a, Healthy: h.Healthy, LastChecked: now}
			if !h.Healthy {
				u.Message = fmt.Sprintf("%g failed health checks since %s", h.Failures, h.Since.UTC().Format(time.RFC3339))
			}
			if !h.Since.IsZero() {
				u.LastChecked = metav1.NewTime(h.Since.Truncate(time.Second))
			}
			if p, ok := prev[[2]string{f.Domain, a}]; ok && p.Healthy == u.Healthy && p.Message == u.Message {
				u.LastChecked = p.LastChecked
			}
			out = append(out, u)
		}
	}
	return out
}

// unhealthyUpstreams names the unhealthy nameservers for the
// UpstreamsAvailable condition, "" when none is.
func unhealthyUpstreams(us []operatorv1.UpstreamStatus) string {
	var bad []string
	for _, u := range us {
		if !u.Healthy {
			bad = append(bad, fmt.Sprintf("%s (domain %s): %s", u.Address, u.Domain, u.Message))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "Nameservers failing CoreDNS's health checks: " + strings.Join(bad, "; ") + "."
}
