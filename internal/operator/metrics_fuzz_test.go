package operator

import (
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// FuzzForwardFailures: whatever a DNS pod's metrics endpoint returns (the
// operator scrapes pods it does not control), parsing it and reading the
// forward health counters never panics, and every count read is a
// forward proxy's.
func FuzzForwardFailures(f *testing.F) {
	for _, s := range []string{
		"# TYPE coredns_proxy_healthcheck_failures_total counter\ncoredns_proxy_healthcheck_failures_total{proxy_name=\"forward\",to=\"10.0.0.1:53\"} 3\n",
		"coredns_proxy_healthcheck_failures_total{proxy_name=\"grpc\",to=\"x\"} 1\n",
		"coredns_proxy_healthcheck_failures_total 1\n",
		"coredns_proxy_healthcheck_failures_total{to=\"[::1]:53\",proxy_name=\"forward\"} NaN\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(text))
		if err != nil {
			return
		}
		mfs := make([]*dto.MetricFamily, 0, len(fams))
		for _, mf := range fams {
			mfs = append(mfs, mf)
		}
		for addr := range forwardFailures(mfs) {
			if addr == "" {
				t.Fatalf("a count for an empty address from %q", text)
			}
		}
	})
}
