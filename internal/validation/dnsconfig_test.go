package validation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestUpstreamPodDNSConfig runs upstream's TestValidatePodDNSConfig (k/k
// pkg/apis/core/validation/validation_test.go; rows #1-#17): ClusterFirst unless noted, strict search rules.
func TestUpstreamPodDNSConfig(t *testing.T) {
	t.Parallel()
	ns3 := []string{"127.0.0.1", "10.0.0.10", "8.8.8.8"}
	s33 := numbered("custom", 33)
	long2049 := lengths(append([]int{65}, repeat(63, 31)...)...)
	ns4 := []string{"127.0.0.1", "10.0.0.10", "8.8.8.8", "1.2.3.4"}
	tests := []struct {
		name   string
		policy corev1.DNSPolicy
		cfg    *corev1.PodDNSConfig
		want   []string
	}{
		{name: "#1 empty dnsConfig", cfg: &corev1.PodDNSConfig{}},
		{name: "#2 option with name", cfg: &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}}}},
		{name: "#3 option without name", cfg: &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Value: ptr("2")}}},
			want: []string{"spec.dnsConfig.options[0]: Required value: must not be empty"}},
		{name: "#4 None with a nameserver", policy: corev1.DNSNone, cfg: &corev1.PodDNSConfig{Nameservers: []string{"127.0.0.1"}}},
		{name: "#5 None without nameservers", policy: corev1.DNSNone, cfg: searches("custom"),
			want: []string{"spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None"}},
		{name: "#5b None without dnsConfig", policy: corev1.DNSNone,
			want: []string{"spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"}},
		{name: "#5c None returns early", policy: corev1.DNSNone, cfg: &corev1.PodDNSConfig{Searches: []string{"Bad_"}, Options: []corev1.PodDNSConfigOption{{}}},
			want: []string{"spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None"}},
		{name: "#6 trailing dot", cfg: searches("custom.")},
		{name: "#7 3 nameservers, 6 searches", cfg: &corev1.PodDNSConfig{Nameservers: ns3,
			Searches: []string{"custom", "mydomain.com", "local", "cluster.local", "svc.cluster.local", "default.svc.cluster.local."}}},
		{name: "#8 32 searches", cfg: &corev1.PodDNSConfig{Nameservers: ns3, Searches: numbered("custom", 32)}},
		{name: "#9 33 searches", cfg: &corev1.PodDNSConfig{Nameservers: ns3, Searches: s33},
			want: []string{"spec.dnsConfig.searches: Invalid value: " + jsonOf(t, s33) + ": must not have more than 32 search paths"}},
		{name: "#10 4 nameservers", cfg: &corev1.PodDNSConfig{Nameservers: ns4},
			want: []string{"spec.dnsConfig.nameservers: Invalid value: " + jsonOf(t, ns4) + ": must not have more than 3 nameservers"}},
		{name: "#11 256 chars", cfg: &corev1.PodDNSConfig{Searches: lengths(1, 50, 50, 50, 50, 50)}},
		{name: "#12 257 chars", cfg: &corev1.PodDNSConfig{Searches: lengths(2, 50, 50, 50, 50, 50)}},
		{name: "#13 2048 chars", cfg: &corev1.PodDNSConfig{Searches: lengths(append([]int{64}, repeat(63, 31)...)...)}},
		{name: "#14 2049 chars", cfg: &corev1.PodDNSConfig{Searches: long2049},
			want: []string{"spec.dnsConfig.searches: Invalid value: " + jsonOf(t, long2049) + ": must not have more than 2048 characters (including spaces) in the search list"}},
		{name: "#15 invalid nameserver", cfg: &corev1.PodDNSConfig{Nameservers: []string{"invalid"}},
			want: []string{`spec.dnsConfig.nameservers[0]: Invalid value: "invalid": ` + ipMsg}},
		{name: "#16 non-canonical IPv6", cfg: &corev1.PodDNSConfig{Nameservers: []string{"FE80::0202:B3FF:FE1E:8329"}}},
		{name: "#16b legacy IPv4 leading zeros", cfg: &corev1.PodDNSConfig{Nameservers: []string{"010.002.003.004", "::ffff:1.2.3.4"}}},
		{name: "#17 bad character", cfg: searches("custom?"),
			want: []string{`spec.dnsConfig.searches[0]: Invalid value: "custom?": ` + strictMsg}},
		{name: "errors accumulate in order",
			cfg: &corev1.PodDNSConfig{Nameservers: []string{"1.2.3.4", "x", "5.6.7.8", "9.9.9.9"}, Searches: []string{"ok", "a_b", "ok."},
				Options: []corev1.PodDNSConfigOption{{Name: "x"}, {}}},
			want: []string{
				"spec.dnsConfig.nameservers: Invalid value: " + jsonOf(t, []string{"1.2.3.4", "x", "5.6.7.8", "9.9.9.9"}) + ": must not have more than 3 nameservers",
				`spec.dnsConfig.nameservers[1]: Invalid value: "x": ` + ipMsg,
				`spec.dnsConfig.searches[1]: Invalid value: "a_b": ` + strictMsg,
				"spec.dnsConfig.options[1]: Required value: must not be empty",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.policy == "" {
				tt.policy = corev1.DNSClusterFirst
			}
			expectErrs(t, ValidatePodSpecDNS(withConfig(tt.policy, tt.cfg), nil, specPath(), strictOpts), tt.want...)
		})
	}
}

// TestSearchLimitsMeasureRawStrings checks that trailing dots count towards
// the 2048 characters although the domain check trims them.
func TestSearchLimitsMeasureRawStrings(t *testing.T) {
	t.Parallel()
	s := lengths(append([]int{63}, repeat(63, 31)...)...) // 2047 with spaces
	s[0] += "."
	expectErrs(t, ValidatePodSpecDNS(withConfig(corev1.DNSClusterFirst, searches(s...)), nil, specPath(), strictOpts))
	s[1] += "."
	expectErrs(t, ValidatePodSpecDNS(withConfig(corev1.DNSClusterFirst, searches(s...)), nil, specPath(), strictOpts),
		"spec.dnsConfig.searches: Invalid value: "+jsonOf(t, s)+": "+msgSearchListTooLong)
}

// TestRelaxedSearchDomain runs upstream's
// TestValidatePodDNSConfigWithRelaxedSearchDomain (#18-#29) and apimachinery's
// TestIsDNS1123SubdomainWithUnderscore (#30-#32) in both modes.
func TestRelaxedSearchDomain(t *testing.T) {
	t.Parallel()
	nul := "a." + strings.Repeat("\x00", 251) + ".com"
	tests := []struct {
		search string
		// The single rendered error under strict and relaxed rules ("" = valid).
		strict, relaxed string
	}{
		{"_sip._tcp.abc_d.example.com", `"_sip._tcp.abc_d.example.com": ` + strictMsg, ""},   // #18
		{"abc_d.example.com", `"abc_d.example.com": ` + strictMsg, ""},                       // #19
		{".", `"": ` + strictMsg, ""},                                                        // #20
		{"..", `".": ` + strictMsg, `".": ` + relaxedMsg},                                    // #21
		{"_.", `"_": ` + strictMsg, `"_": ` + relaxedMsg},                                    // #22
		{"-.", `"-": ` + strictMsg, `"-": ` + relaxedMsg},                                    // #23
		{"__.", `"__": ` + strictMsg, `"__": ` + relaxedMsg},                                 // #24
		{".__", `".__": ` + strictMsg, `".__": ` + relaxedMsg},                               // #25
		{"._", `"._": ` + strictMsg, `"._": ` + relaxedMsg},                                  // #26
		{"____________", `"____________": ` + strictMsg, `"____________": ` + relaxedMsg},    // #27
		{"example.com", "", ""},                                                              // #28
		{"☃.example.com", `"☃.example.com": ` + strictMsg, `"☃.example.com": ` + relaxedMsg}, // #29
		{"_example.com", `"_example.com": ` + strictMsg, ""},                                 // #30
		{"sub._example.com", `"sub._example.com": ` + strictMsg, ""},                         // #30
		{"sub_domain.example.com", `"sub_domain.example.com": ` + strictMsg, ""},             // #30
		{"sub-domain.example.com", "", ""},                                                   // #30
		{"", `"": ` + strictMsg, `"": ` + relaxedMsg},                                        // #31
		{"Example.com", `"Example.com": ` + strictMsg, `"Example.com": ` + relaxedMsg},       // #31
		{"-example.com", `"-example.com": ` + strictMsg, `"-example.com": ` + relaxedMsg},    // #31
		{"example.com-", `"example.com-": ` + strictMsg, `"example.com-": ` + relaxedMsg},    // #31
		{"example@.com", `"example@.com": ` + strictMsg, `"example@.com": ` + relaxedMsg},    // #31
		{"a__b.a-_b", `"a__b.a-_b": ` + strictMsg, ""},
		{"__a", `"__a": ` + strictMsg, `"__a": ` + relaxedMsg},
		{"a_.com", `"a_.com": ` + strictMsg, `"a_.com": ` + relaxedMsg},
	}
	for _, tt := range tests {
		for _, relaxed := range []bool{false, true} {
			want, opts := tt.strict, strictOpts
			if relaxed {
				want, opts = tt.relaxed, allOn
			}
			t.Run(fmt.Sprintf("%q/relaxed=%v", tt.search, relaxed), func(t *testing.T) {
				t.Parallel()
				got := ValidatePodSpecDNS(withConfig(corev1.DNSClusterFirst, searches(tt.search)), nil, specPath(), opts)
				if want == "" {
					expectErrs(t, got)
					return
				}
				expectErrs(t, got, "spec.dnsConfig.searches[0]: Invalid value: "+want)
			})
		}
	}

	// #32: a name can break both the length and the character rule.
	for _, tc := range []struct {
		opts Options
		msg  string
	}{{strictOpts, strictMsg}, {allOn, relaxedMsg}} {
		got := ValidatePodSpecDNS(withConfig(corev1.DNSClusterFirst, searches(nul)), nil, specPath(), tc.opts)
		prefix := fmt.Sprintf("spec.dnsConfig.searches[0]: Invalid value: %q: ", nul)
		expectErrs(t, got, prefix+lenMsg, prefix+tc.msg)
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}
