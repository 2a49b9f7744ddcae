package validation

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestValidatePodSpecDNSEdges(t *testing.T) {
	t.Parallel()
	if errs := ValidatePodSpecDNS(nil, nil, specPath(), allOn); errs != nil {
		t.Errorf("nil spec: %v", errs)
	}
	// The path is the caller's: a template's spec reports under it.
	expectErrs(t, ValidatePodSpecDNS(withConfig("", nil), nil, field.NewPath("spec", "template", "spec"), allOn),
		"spec.template.spec.dnsPolicy: Required value")
	// An empty policy is not Custom, so dnsParams is still forbidden.
	expectErrs(t, ValidatePodSpecDNS(withCustom("", []string{"$(HOST)"}), nil, specPath(), allOn),
		"spec.dnsPolicy: Required value",
		"spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom")
}

// fuzzSpec builds a pod spec from fuzzer input; the bits of shape pick
// which DNS fields are present.
func fuzzSpec(policy, s1, s2, s3, o1, o2 string, shape uint8) *dpcorev1.PodSpec {
	var s dpcorev1.PodSpec
	s.DNSPolicy = corev1.DNSPolicy(policy)
	if shape&1 != 0 {
		s.DNSConfig = &corev1.PodDNSConfig{
			Nameservers: []string{s3},
			Searches:    []string{s1, s2},
			Options:     []corev1.PodDNSConfigOption{{Name: o1, Value: &o2}},
		}
	}
	switch {
	case shape&2 != 0:
		s.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{s1, s2, s3}, Options: []string{o1, o2}}}
	case shape&4 != 0:
		s.DNSParams = &dpcorev1.PodDNSParams{}
	}
	return &s
}

// FuzzValidatePodSpecDNS: any spec, old spec and gate set yields errors that
// each name a field under the spec's path, without panicking or touching
// the objects it validates.
func FuzzValidatePodSpecDNS(f *testing.F) {
	f.Add("Custom", "$(NAMESPACE).svc.$(CLUSTER)", "my.suffix", "$(HOST)", "ndots:2", "rotate", uint8(2), uint8(0xff))
	f.Add("None", ".", "_x.com", "1.2.3.4", "ndots", "", uint8(1), uint8(0))
	f.Add("ClusterFirstWithAutopath", "Foo", "a..b", "::1", "", "ndots:16", uint8(3), uint8(0x55))
	f.Add("", "", "", "", "", "", uint8(4), uint8(0x80))
	f.Add("Custom", "$HOST", "abc$(NAMESPACE)1", "$(FOO)", "ndots:x", "ndots:", uint8(6), uint8(0x18))
	f.Fuzz(func(t *testing.T, policy, s1, s2, s3, o1, o2 string, shape, gates uint8) {
		opts := Options{
			RelaxedDNSSearchValidation: gates&1 != 0,
			PodDNSCustomPolicy:         gates&2 != 0,
			PodDNSAutopath:             gates&4 != 0,
		}
		spec := fuzzSpec(policy, s1, s2, s3, o1, o2, shape)
		var old *dpcorev1.PodSpec
		if gates&8 != 0 {
			// A different arrangement of the same strings as the stored object.
			old = fuzzSpec(o2, s3, s1, s2, policy, o1, shape>>3|gates>>4)
		}
		specCopy := fuzzSpec(policy, s1, s2, s3, o1, o2, shape)
		var oldCopy *dpcorev1.PodSpec
		if old != nil {
			oldCopy = fuzzSpec(o2, s3, s1, s2, policy, o1, shape>>3|gates>>4)
		}

		errs := ValidatePodSpecDNS(spec, old, specPath(), opts)
		for _, e := range errs {
			if e == nil {
				t.Fatal("nil error in list")
			}
			if !strings.HasPrefix(e.Field, "spec.dns") {
				t.Fatalf("error without a DNS field path: %q (%v)", e.Field, e)
			}
			if e.ErrorBody() == "" {
				t.Fatalf("error without a body: %v", e)
			}
		}
		if !reflect.DeepEqual(spec, specCopy) || !reflect.DeepEqual(old, oldCopy) {
			t.Fatal("validation modified its input")
		}
		// The same input must give the same answer: no hidden state.
		if again := ValidatePodSpecDNS(spec, old, specPath(), opts); !reflect.DeepEqual(rendered(errs), rendered(again)) {
			t.Fatalf("second run differs: %v vs %v", errs, again)
		}
	})
}
