package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

const subs = `valid substitutions are "$(NAMESPACE)", "$(CLUSTER)", "$(HOST)"`

// TestCustomPolicy covers the examples and invalid configurations of the
// Custom policy's design (kubernetes/community
// design-proposals/network/pod-resolv-conf.md) as docs/pod-dns.md ("Rules")
// lists them, with today's
// Kubernetes limits (32 paths, 2048 characters) and ndots <= 15.
func TestCustomPolicy(t *testing.T) {
	t.Parallel()
	custom := dpcorev1.DNSCustom
	s33 := numbered("a", 33)
	long := lengths(append([]int{65}, repeat(63, 31)...)...)
	tests := []struct {
		name    string
		spec    *dpcorev1.PodSpec
		gateOff bool // RelaxedDNSSearchValidation off
		want    []string
	}{
		// Valid.
		{name: "docs example", spec: withCustom(custom, []string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"}, "ndots:2")},
		{name: "$(HOST) alone", spec: withCustom(custom, []string{"$(HOST)"})},
		{name: "custom suffix, $(HOST), ndots:3", spec: withCustom(custom, []string{"my.custom.suffix", "$(HOST)"}, "ndots:3")},
		{name: "no search at all", spec: withCustom(custom, nil)},
		{name: "absolute entry", spec: withCustom(custom, []string{"$(NAMESPACE).$(CLUSTER)."})},
		{name: "ndots bounds and other options", spec: withCustom(custom, nil, "ndots:0", "ndots:15", "ndots:05", "rotate", "attempts:3", "edns0", "ndots-x", "timeout:")},
		{name: "relaxed substitution entry, gate on", spec: withCustom(custom, []string{"_x.$(CLUSTER)"})},
		{name: "single dot, gate on", spec: withCustom(custom, []string{".", "$(HOST)"})},
		{name: "32 entries", spec: withCustom(custom, numbered("a", 32))},
		{name: "2048 characters", spec: withCustom(custom, lengths(append([]int{64}, repeat(63, 31)...)...))},

		// Invalid.
		{name: "relaxed substitution entry, gate off", gateOff: true, spec: withCustom(custom, []string{"_x.$(CLUSTER)"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "_x.$(CLUSTER)": ` + strictMsg}},
		{name: "single dot, gate off", gateOff: true, spec: withCustom(custom, []string{"."}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: ".": ` + strictMsg}},
		{name: "substitution inside a label", spec: withCustom(custom, []string{"abc$(NAMESPACE)1234"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "abc$(NAMESPACE)1234": substitution "$(NAMESPACE)" must be a whole DNS label, not part of the label "abc$(NAMESPACE)1234"`}},
		{name: "unknown substitution", spec: withCustom(custom, []string{"$(FOO).svc"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "$(FOO).svc": unknown substitution "$(FOO)": ` + subs}},
		{name: "$HOST without parentheses", spec: withCustom(custom, []string{"my.suffix", "$HOST"}),
			want: []string{`spec.dnsParams.custom.search[1]: Invalid value: "$HOST": "$HOST" is not a substitution: write "$(HOST)"`}},
		{name: "$(HOST) not last", spec: withCustom(custom, []string{"$(HOST)", "my.custom.suffix"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "$(HOST)": "$(HOST)" must be the last search entry`}},
		{name: "$(HOST) inside an entry", spec: withCustom(custom, []string{"a.$(HOST)"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "a.$(HOST)": "$(HOST)" must be a whole search entry (it is the node's whole search list), not part of "a.$(HOST)"`}},
		{name: "substitution error hides the domain error", spec: withCustom(custom, []string{"Bad$(FOO)"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "Bad$(FOO)": unknown substitution "$(FOO)": ` + subs}},
		{name: "invalid domain around a substitution", spec: withCustom(custom, []string{"My.$(CLUSTER)"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "My.$(CLUSTER)": ` + relaxedMsg}},
		{name: "empty entry", spec: withCustom(custom, []string{""}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "": ` + relaxedMsg}},
		{name: "too long entry", spec: withCustom(custom, []string{strings.Repeat("a", 254)}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "` + strings.Repeat("a", 254) + `": ` + lenMsg}},
		{name: "33 entries", spec: withCustom(custom, s33),
			want: []string{"spec.dnsParams.custom.search: Invalid value: " + jsonOf(t, s33) + ": must not have more than 32 search paths"}},
		{name: "2049 characters", spec: withCustom(custom, long),
			want: []string{"spec.dnsParams.custom.search: Invalid value: " + jsonOf(t, long) + ": must not have more than 2048 characters (including spaces) in the search list"}},
		{name: "ndots 16", spec: withCustom(custom, nil, "ndots:16"),
			want: []string{`spec.dnsParams.custom.options[0]: Invalid value: "ndots:16": ` + ndotsMsg}},
		{name: "ndots not a number", spec: withCustom(custom, nil, "rotate", "ndots:x"),
			want: []string{`spec.dnsParams.custom.options[1]: Invalid value: "ndots:x": ` + ndotsMsg}},
		{name: "ndots empty value", spec: withCustom(custom, nil, "ndots:"),
			want: []string{`spec.dnsParams.custom.options[0]: Invalid value: "ndots:": ` + ndotsMsg}},
		{name: "ndots without value", spec: withCustom(custom, nil, "ndots"),
			want: []string{`spec.dnsParams.custom.options[0]: Invalid value: "ndots": ` + ndotsMsg}},
		{name: "ndots signs, spaces, huge", spec: withCustom(custom, nil, "ndots:-1", "ndots:+3", "ndots: 3", "ndots:99999999999999999999"),
			want: []string{
				`spec.dnsParams.custom.options[0]: Invalid value: "ndots:-1": ` + ndotsMsg,
				`spec.dnsParams.custom.options[1]: Invalid value: "ndots:+3": ` + ndotsMsg,
				`spec.dnsParams.custom.options[2]: Invalid value: "ndots: 3": ` + ndotsMsg,
				`spec.dnsParams.custom.options[3]: Invalid value: "ndots:99999999999999999999": ` + ndotsMsg,
			}},
		{name: "empty option", spec: withCustom(custom, nil, "ndots:1", ""),
			want: []string{"spec.dnsParams.custom.options[1]: Required value: must not be empty"}},
		{name: "Custom without dnsParams", spec: withConfig(custom, nil),
			want: []string{"spec.dnsParams: Required value: must be set when `dnsPolicy` is Custom"}},
		{name: "Custom without dnsParams.custom", spec: func() *dpcorev1.PodSpec {
			s := withConfig(custom, nil)
			s.DNSParams = &dpcorev1.PodDNSParams{}
			return s
		}(), want: []string{"spec.dnsParams.custom: Required value: must be set when `dnsPolicy` is Custom"}},
		{name: "dnsParams with ClusterFirst", spec: withCustom(corev1.DNSClusterFirst, []string{"$(HOST)"}),
			want: []string{"spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom"}},
		{name: "empty dnsParams with Default", spec: func() *dpcorev1.PodSpec {
			s := withConfig(corev1.DNSDefault, nil)
			s.DNSParams = &dpcorev1.PodDNSParams{}
			return s
		}(), want: []string{"spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom"}},
		{name: "forbidden dnsParams still has its content checked", spec: withCustom(corev1.DNSClusterFirstWithHostNet, []string{"$(HOST)", "x"}, "ndots:16"),
			want: []string{
				"spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom",
				`spec.dnsParams.custom.search[0]: Invalid value: "$(HOST)": "$(HOST)" must be the last search entry`,
				`spec.dnsParams.custom.options[0]: Invalid value: "ndots:16": ` + ndotsMsg,
			}},
		{name: "dnsParams with None", spec: func() *dpcorev1.PodSpec {
			s := withCustom(corev1.DNSNone, []string{"a.b"})
			s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}}
			return s
		}(), want: []string{"spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom"}},
		{name: "every problem at once", spec: withCustom(custom, append(numbered("Z", 33), "$(HOST)"), "", "ndots:x"),
			want: []string{
				"spec.dnsParams.custom.search: Invalid value: " + jsonOf(t, append(numbered("Z", 33), "$(HOST)")) + ": must not have more than 32 search paths",
				`spec.dnsParams.custom.search[0]: Invalid value: "Z": ` + relaxedMsg,
				"spec.dnsParams.custom.options[0]: Required value: must not be empty",
				`spec.dnsParams.custom.options[1]: Invalid value: "ndots:x": ` + ndotsMsg,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := allOn
			if tt.gateOff {
				opts = strictOpts
			}
			expectErrs(t, ValidatePodSpecDNS(tt.spec, nil, specPath(), opts), tt.want...)
		})
	}
}

// TestCustomWithDNSConfig: the Custom policy's design (kubernetes/community
// design-proposals/network/pod-resolv-conf.md) says nothing about dnsConfig
// on a Custom pod; it is validated by the ordinary rules and not forbidden.
func TestCustomWithDNSConfig(t *testing.T) {
	t.Parallel()
	spec := withCustom(dpcorev1.DNSCustom, []string{"$(HOST)"})
	spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.1"}, Searches: []string{"extra.example"}}
	expectErrs(t, ValidatePodSpecDNS(spec, nil, specPath(), allOn))
	spec.DNSConfig.Nameservers = []string{"nope"}
	expectErrs(t, ValidatePodSpecDNS(spec, nil, specPath(), allOn),
		`spec.dnsConfig.nameservers[0]: Invalid value: "nope": `+ipMsg)
}
