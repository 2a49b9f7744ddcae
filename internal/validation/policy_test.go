package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

const (
	all6      = `supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"`
	noCustom  = `supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "ClusterFirstWithAutopath"`
	noAuto    = `supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom"`
	upstream4 = `supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`
)

// validFor returns a spec that is valid for policy apart from the policy
// itself, so a test sees only the policy's own errors.
func validFor(policy corev1.DNSPolicy) *dpcorev1.PodSpec {
	switch policy {
	case dpcorev1.DNSCustom:
		return withCustom(policy, []string{"$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"}, "ndots:2")
	case corev1.DNSNone:
		return withConfig(policy, &corev1.PodDNSConfig{Nameservers: []string{"1.2.3.4"}})
	}
	return withConfig(policy, nil)
}

func TestDNSPolicy(t *testing.T) {
	t.Parallel()
	customOff := allOn
	customOff.PodDNSCustomPolicy = false
	autoOff := allOn
	autoOff.PodDNSAutopath = false
	bothOff := Options{RelaxedDNSSearchValidation: true}

	tests := []struct {
		name   string
		policy corev1.DNSPolicy
		old    corev1.DNSPolicy // "" = create
		opts   Options
		want   string
	}{
		{name: "empty", policy: "", opts: allOn, want: "spec.dnsPolicy: Required value"},
		{name: "unknown lists all six", policy: "invalid", opts: allOn, want: `spec.dnsPolicy: Unsupported value: "invalid": ` + all6},
		{name: "case matters", policy: "clusterfirst", opts: allOn, want: `spec.dnsPolicy: Unsupported value: "clusterfirst": ` + all6},
		{name: "unknown, Custom gate off", policy: "invalid", opts: customOff, want: `spec.dnsPolicy: Unsupported value: "invalid": ` + noCustom},
		{name: "unknown, Autopath gate off", policy: "invalid", opts: autoOff, want: `spec.dnsPolicy: Unsupported value: "invalid": ` + noAuto},
		{name: "unknown, both gates off is upstream's message", policy: "invalid", opts: bothOff, want: `spec.dnsPolicy: Unsupported value: "invalid": ` + upstream4},
		{name: "unknown on update keeps nothing", policy: "invalid", old: "invalid", opts: allOn, want: `spec.dnsPolicy: Unsupported value: "invalid": ` + all6},

		{name: "ClusterFirstWithHostNet", policy: corev1.DNSClusterFirstWithHostNet, opts: bothOff},
		{name: "ClusterFirst", policy: corev1.DNSClusterFirst, opts: bothOff},
		{name: "Default", policy: corev1.DNSDefault, opts: bothOff},
		{name: "None", policy: corev1.DNSNone, opts: bothOff},
		{name: "Custom", policy: dpcorev1.DNSCustom, opts: allOn},
		{name: "ClusterFirstWithAutopath", policy: dpcorev1.DNSClusterFirstWithAutopath, opts: allOn},

		{name: "Custom, gate off, create", policy: dpcorev1.DNSCustom, opts: customOff,
			want: `spec.dnsPolicy: Unsupported value: "Custom": ` + noCustom},
		{name: "Custom, gate off, update of a Custom pod", policy: dpcorev1.DNSCustom, old: dpcorev1.DNSCustom, opts: customOff},
		{name: "Custom, gate off, update of a ClusterFirst pod", policy: dpcorev1.DNSCustom, old: corev1.DNSClusterFirst, opts: customOff,
			want: `spec.dnsPolicy: Unsupported value: "Custom": ` + noCustom},
		{name: "Custom, gate off, update of an Autopath pod", policy: dpcorev1.DNSCustom, old: dpcorev1.DNSClusterFirstWithAutopath, opts: bothOff,
			want: `spec.dnsPolicy: Unsupported value: "Custom": ` + upstream4},
		{name: "Autopath, gate off, create", policy: dpcorev1.DNSClusterFirstWithAutopath, opts: autoOff,
			want: `spec.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": ` + noAuto},
		{name: "Autopath, gate off, update of an Autopath pod", policy: dpcorev1.DNSClusterFirstWithAutopath, old: dpcorev1.DNSClusterFirstWithAutopath, opts: autoOff},
		{name: "Autopath, gate off, update of a Default pod", policy: dpcorev1.DNSClusterFirstWithAutopath, old: corev1.DNSDefault, opts: autoOff,
			want: `spec.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": ` + noAuto},
		{name: "Autopath, gate off, update of a Custom pod", policy: dpcorev1.DNSClusterFirstWithAutopath, old: dpcorev1.DNSCustom, opts: bothOff,
			want: `spec.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": ` + upstream4},
		{name: "leaving a gated policy is always allowed", policy: corev1.DNSClusterFirst, old: dpcorev1.DNSCustom, opts: bothOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var old *dpcorev1.PodSpec
			if tt.old != "" {
				old = validFor(tt.old)
			}
			got := ValidatePodSpecDNS(validFor(tt.policy), old, specPath(), tt.opts)
			if tt.want == "" {
				expectErrs(t, got)
				return
			}
			expectErrs(t, got, tt.want)
		})
	}
}

// TestRejectedPolicyStillChecksTheRest: a rejected policy must not hide the
// other problems of the same request.
func TestRejectedPolicyStillChecksTheRest(t *testing.T) {
	t.Parallel()
	customOff := Options{PodDNSAutopath: true}

	spec := withCustom(dpcorev1.DNSCustom, []string{"$HOST"}, "ndots:99")
	expectErrs(t, ValidatePodSpecDNS(spec, nil, specPath(), customOff),
		`spec.dnsPolicy: Unsupported value: "Custom": `+noCustom,
		`spec.dnsParams.custom.search[0]: Invalid value: "$HOST": "$HOST" is not a substitution: write "$(HOST)"`,
		`spec.dnsParams.custom.options[0]: Invalid value: "ndots:99": `+ndotsMsg)

	noParams := withConfig(dpcorev1.DNSCustom, searches("a_b"))
	expectErrs(t, ValidatePodSpecDNS(noParams, nil, specPath(), customOff),
		`spec.dnsPolicy: Unsupported value: "Custom": `+noCustom,
		`spec.dnsConfig.searches[0]: Invalid value: "a_b": `+strictMsg,
		"spec.dnsParams: Required value: must be set when `dnsPolicy` is Custom")

	unknown := withCustom("Bogus", []string{"ok.example"})
	expectErrs(t, ValidatePodSpecDNS(unknown, nil, specPath(), allOn),
		`spec.dnsPolicy: Unsupported value: "Bogus": `+all6,
		"spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom")
}

// TestAutopath: dnsConfig follows the ClusterFirst rules, dnsParams is
// forbidden (rule 5).
func TestAutopath(t *testing.T) {
	t.Parallel()
	ap := dpcorev1.DNSClusterFirstWithAutopath
	cfg := &corev1.PodDNSConfig{Nameservers: []string{"1.2.3.4"}, Searches: []string{"extra.example", "_srv.example"},
		Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}}}
	expectErrs(t, ValidatePodSpecDNS(withConfig(ap, cfg), nil, specPath(), allOn))
	expectErrs(t, ValidatePodSpecDNS(withConfig(ap, cfg), nil, specPath(), strictOpts),
		`spec.dnsConfig.searches[1]: Invalid value: "_srv.example": `+strictMsg)
	expectErrs(t, ValidatePodSpecDNS(withConfig(ap, &corev1.PodDNSConfig{Nameservers: []string{"a", "b", "c", "d"}}), nil, specPath(), allOn),
		`spec.dnsConfig.nameservers: Invalid value: ["a","b","c","d"]: must not have more than 3 nameservers`,
		`spec.dnsConfig.nameservers[0]: Invalid value: "a": `+ipMsg,
		`spec.dnsConfig.nameservers[1]: Invalid value: "b": `+ipMsg,
		`spec.dnsConfig.nameservers[2]: Invalid value: "c": `+ipMsg,
		`spec.dnsConfig.nameservers[3]: Invalid value: "d": `+ipMsg)
	expectErrs(t, ValidatePodSpecDNS(withCustom(ap, []string{"$(HOST)"}), nil, specPath(), allOn),
		"spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom")
}
