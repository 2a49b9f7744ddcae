package operator

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

func TestConfigMapTooLarge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data map[string]string
		want string
	}{
		{"at the limit", map[string]string{CorefileKey: strings.Repeat("x", maxConfigMapData-10), "ca-a.crt": "0123456789"}, ""},
		{"one byte over", map[string]string{CorefileKey: strings.Repeat("x", maxConfigMapData-10), "ca-a.crt": "0123456789a"},
			"would hold 1048577 bytes (the Corefile 1048566, its CA bundles 11), more than the 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := configMapTooLarge(&corev1.ConfigMap{Data: tt.data})
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("configMapTooLarge = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFitStatus: a status over the object limit keeps the unhealthy
// upstreams and as many healthy ones as fit, and says so in
// UpstreamsAvailable; one under it is left alone.
func TestFitStatus(t *testing.T) {
	t.Parallel()
	mk := func(n int, unhealthyEvery int) *operatorv1.DNS {
		d := &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		for i := range n {
			u := operatorv1.UpstreamStatus{Domain: fmt.Sprintf("d%d.%s", i, strings.Repeat("x", 200)), Address: fmt.Sprintf("[2001:db8::%x]:53", i), Healthy: true}
			if unhealthyEvery > 0 && i%unhealthyEvery == 0 {
				u.Healthy, u.Message = false, "3 failed health checks since 2026-11-26T00:00:00Z"
			}
			d.Status.Upstreams = append(d.Status.Upstreams, u)
		}
		d.Status.Conditions = []metav1.Condition{{Type: operatorv1.DNSUpstreamsAvailable, Status: metav1.ConditionFalse, Reason: "UpstreamUnhealthy", Message: strings.Repeat("m", 40000)}}
		return d
	}

	small := mk(10, 0)
	if note := fitStatus(small); note != "" || len(small.Status.Upstreams) != 10 {
		t.Fatalf("a small status was cut: %q, %d upstreams", note, len(small.Status.Upstreams))
	}
	if n := len(small.Status.Conditions[0].Message); n > maxConditionMessage {
		t.Errorf("condition message of %d bytes, over the limit", n)
	}

	big := mk(10000, 100)
	note := fitStatus(big)
	if note == "" {
		t.Fatal("a status over the limit was not cut")
	}
	if size := jsonSize(big); size > maxObjectBytes-objectSlack {
		t.Errorf("cut object is %d bytes, over %d", size, maxObjectBytes-objectSlack)
	}
	unhealthy := 0
	for _, u := range big.Status.Upstreams {
		if !u.Healthy {
			unhealthy++
		}
	}
	if unhealthy != 100 {
		t.Errorf("kept %d unhealthy upstreams, want all 100", unhealthy)
	}
	if kept := len(big.Status.Upstreams); kept < 1000 || !strings.Contains(note, fmt.Sprintf("lists %d of the 10000 nameservers", kept)) {
		t.Errorf("kept %d upstreams, note %q", kept, note)
	}
	c := meta.FindStatusCondition(big.Status.Conditions, operatorv1.DNSUpstreamsAvailable)
	if !strings.Contains(c.Message, "status.upstreams lists") || len(c.Message) > maxConditionMessage {
		t.Errorf("UpstreamsAvailable does not say the list was cut, or is too long (%d bytes)", len(c.Message))
	}
	// The same status cut again is the same: no write per pass.
	again := mk(10000, 100)
	fitStatus(again)
	if jsonSize(again) != jsonSize(big) {
		t.Error("cutting is not deterministic")
	}
}
