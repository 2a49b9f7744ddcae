package validation

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// Messages as the API server renders them; written out rather than taken
// from apimachinery so a change there shows up here.
const (
	strictMsg  = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	relaxedMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')`
	ipMsg      = `must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`
	lenMsg     = `must be no more than 253 characters`
	ndotsMsg   = `ndots must be an integer between 0 and 15 (glibc and musl cap it at 15)`
)

var (
	// allOn is the default gate set; strictOpts differs only in the KEP-4427
	// gate, so a test can flip exactly that.
	allOn      = Options{RelaxedDNSSearchValidation: true, PodDNSCustomPolicy: true, PodDNSAutopath: true}
	strictOpts = Options{RelaxedDNSSearchValidation: false, PodDNSCustomPolicy: true, PodDNSAutopath: true}
)

func specPath() *field.Path { return field.NewPath("spec") }

func rendered(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// expectErrs compares the rendered errors, in order, with want.
func expectErrs(t *testing.T, got field.ErrorList, want ...string) {
	t.Helper()
	g := rendered(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n got: %s\nwant: %s", list(g), list(want))
	}
}

func list(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return "\n  " + strings.Join(s, "\n  ")
}

// jsonOf renders a list the way field.Invalid renders a non-string value.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func withConfig(policy corev1.DNSPolicy, cfg *corev1.PodDNSConfig) *dpcorev1.PodSpec {
	s := &dpcorev1.PodSpec{}
	s.DNSPolicy = policy
	s.DNSConfig = cfg
	return s
}

func searches(s ...string) *corev1.PodDNSConfig {
	return &corev1.PodDNSConfig{Searches: append([]string(nil), s...)}
}

func withCustom(policy corev1.DNSPolicy, search []string, options ...string) *dpcorev1.PodSpec {
	s := &dpcorev1.PodSpec{}
	s.DNSPolicy = policy
	s.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{
		Search:  append([]string(nil), search...),
		Options: options,
	}}
	return s
}

func ptr[T any](v T) *T { return &v }

// numbered returns first followed by "2", "3", … up to n entries.
func numbered(first string, n int) []string {
	out := []string{first}
	for i := 2; i <= n; i++ {
		out = append(out, itoa(i))
	}
	return out
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// lengths returns search entries of the given lengths made of letters.
func lengths(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strings.Repeat(string(rune('a'+i%26)), n)
	}
	return out
}
