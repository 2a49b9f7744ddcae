package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// maximalDNS is a DNS with n forward plugins each as long as the rules
// allow: a 253-character domain, 15 IPv6 nameservers with ports, TLS with
// a 253-character server name and CA bundle name; and a status listing
// every nameserver unhealthy (the longest entry). It returns the Corefile
// too.
func maximalDNS(t *testing.T, n int) (*operatorv1.DNS, []byte) {
	t.Helper()
	d := &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1 << 62, ResourceVersion: "123456789012",
		UID: "01234567-89ab-cdef-0123-456789abcdef", CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))}}
	bundles := map[string]string{}
	l := strings.Repeat("a", 63)
	long := func(c byte, i int) string { // 253 characters
		return fmt.Sprintf("%s.%s.%s.%c%04d%s", l, l, l, c, i, strings.Repeat("b", 56))
	}
	for i := range n {
		fp := operatorv1.ForwardPlugin{Domain: long('d', i), Policy: operatorv1.ForwardPolicyRoundRobin}
		for j := range dnsspec.MaxNameServers {
			fp.NameServers = append(fp.NameServers, fmt.Sprintf("[fd00:1111:2222:3333:4444:5555:%04x:%04x]:65535", i+0x1000, j+0x1000))
		}
		ca := long('c', i)
		fp.TransportConfig = &operatorv1.DNSTransportConfig{Transport: operatorv1.TLSTransport,
			TLS: &operatorv1.DNSOverTLSConfig{ServerName: fp.Domain, CABundle: &operatorv1.ConfigMapNameReference{Name: ca}}}
		bundles[ca] = "x"
		d.Spec.PluginConfig.ForwardPlugins = append(d.Spec.PluginConfig.ForwardPlugins, fp)
	}
	if errs := dnsspec.ValidateSpec(&d.Spec, "", field.NewPath("spec")); len(errs) > 0 && n <= dnsspec.MaxForwardPlugins {
		t.Fatalf("the maximal spec is invalid: %v", errs[0])
	}
	text, skipped, err := render.Corefile(&d.Spec, render.Options{CABundles: bundles})
	if err != nil || len(skipped) > 0 {
		t.Fatalf("render: %v %v", err, skipped)
	}
	now := metav1.NewTime(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	d.Status.Conditions = []metav1.Condition{{Type: operatorv1.DNSUpstreamsAvailable, Status: metav1.ConditionFalse, Reason: "UpstreamUnhealthy",
		Message: strings.Repeat("m", maxConditionMessage), LastTransitionTime: now}}
	for _, f := range PublishedForwarders(text) {
		for _, a := range f.Addresses {
			d.Status.Upstreams = append(d.Status.Upstreams, operatorv1.UpstreamStatus{Domain: f.Domain, Address: a, LastChecked: now,
				Message: "1234567 failed health checks since 2026-11-26T00:00:00Z"})
		}
	}
	return d, text
}

// TestMaxForwardPluginsFit is what justifies dnsspec.MaxForwardPlugins:
// at the bound, with every entry maximal, the DNS object with its whole
// status and kubectl's last-applied annotation (the spec again) fits in
// what etcd stores (less the slack fitStatus keeps), the spec fits in the
// 256 KiB of annotations, and the Corefile leaves most of a ConfigMap's
// 1 MiB to CA bundles; at 200 the object does not fit.
func TestMaxForwardPluginsFit(t *testing.T) {
	t.Parallel()
	const annotationLimit = 256 << 10 // apimachinery's TotalAnnotationSizeLimitB
	for _, tt := range []struct {
		n    int
		fits bool
	}{{dnsspec.MaxForwardPlugins, true}, {200, false}} {
		d, corefile := maximalDNS(t, tt.n)
		spec := jsonSize(d.Spec)
		object := jsonSize(d) + spec
		t.Logf("%d maximal forward plugins: Corefile %d bytes, spec %d, object with status and last-applied annotation %d",
			tt.n, len(corefile), spec, object)
		if fits := object <= maxObjectBytes-objectSlack; fits != tt.fits {
			t.Errorf("%d forward plugins: object of %d bytes fits in %d: %v, want %v", tt.n, object, maxObjectBytes-objectSlack, fits, tt.fits)
		}
		if !tt.fits {
			continue
		}
		if spec > annotationLimit {
			t.Errorf("%d forward plugins: spec of %d bytes, over the annotations' %d", tt.n, spec, annotationLimit)
		}
		if len(corefile) > maxConfigMapData/2 {
			t.Errorf("%d forward plugins: Corefile of %d bytes leaves less than half a ConfigMap to CA bundles", tt.n, len(corefile))
		}
		if note := fitStatus(d); note != "" {
			t.Errorf("the status at the bound was cut: %s", note)
		}
	}
}
