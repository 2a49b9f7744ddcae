package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// TestOptionsAreOneWord: the option strings the node agent writes into a
// pod's resolv.conf as they are (dnsParams.custom.options, dnsConfig
// option names and values) are refused when they would not stay one word
// there; before, a newline was accepted and the agent refused the pod for
// ever (issue 29). One already stored ratchets.
func TestOptionsAreOneWord(t *testing.T) {
	t.Parallel()
	custom := dpcorev1.DNSCustom
	str := func(s string) *string { return &s }
	withOptions := func(opts ...corev1.PodDNSConfigOption) *dpcorev1.PodSpec {
		return withConfig(corev1.DNSClusterFirst, &corev1.PodDNSConfig{Options: opts})
	}
	msg := resolvconf.MsgNotOneWord
	tests := []struct {
		name string
		spec *dpcorev1.PodSpec
		old  *dpcorev1.PodSpec
		want []string
	}{
		{name: "plain options", spec: withCustom(custom, nil, "rotate", "edns0", "timeout:2", "ndots:3", "trust-ad")},
		{name: "dnsParams option with a newline", spec: withCustom(custom, nil, "rotate", "edns0\nnameserver 6.6.6.6"),
			want: []string{`spec.dnsParams.custom.options[1]: Invalid value: "edns0\nnameserver 6.6.6.6": ` + msg}},
		{name: "dnsParams option with CR, tab, NUL, DEL, space, NBSP", spec: withCustom(custom, nil, "a\rb", "a\tb", "a\x00b", "a\x7fb", "a b", "a\u00a0b"),
			want: []string{
				`spec.dnsParams.custom.options[0]: Invalid value: "a\rb": ` + msg,
				`spec.dnsParams.custom.options[1]: Invalid value: "a\tb": ` + msg,
				`spec.dnsParams.custom.options[2]: Invalid value: "a\x00b": ` + msg,
				`spec.dnsParams.custom.options[3]: Invalid value: "a\x7fb": ` + msg,
				`spec.dnsParams.custom.options[4]: Invalid value: "a b": ` + msg,
				`spec.dnsParams.custom.options[5]: Invalid value: "a\u00a0b": ` + msg,
			}},
		// ndots has its own rule, which says more than the word rule.
		{name: "ndots with a newline", spec: withCustom(custom, nil, "ndots:1\nnameserver 6.6.6.6"),
			want: []string{`spec.dnsParams.custom.options[0]: Invalid value: "ndots:1\nnameserver 6.6.6.6": ` + msgBadNdots}},
		{name: "dnsParams search with a newline", spec: withCustom(custom, []string{"$(NAMESPACE).svc\nnameserver"}),
			want: []string{`spec.dnsParams.custom.search[0]: Invalid value: "$(NAMESPACE).svc\nnameserver": `}},
		{name: "dnsConfig option name and value", spec: withOptions(
			corev1.PodDNSConfigOption{Name: "edns0\nnameserver"},
			corev1.PodDNSConfigOption{Name: "timeout", Value: str("1\nnameserver 6.6.6.6")},
			corev1.PodDNSConfigOption{Name: "attempts", Value: str("")},
			corev1.PodDNSConfigOption{Name: "ndots", Value: str("2")}),
			want: []string{
				`spec.dnsConfig.options[0].name: Invalid value: "edns0\nnameserver": ` + msg,
				`spec.dnsConfig.options[1].value: Invalid value: "1\nnameserver 6.6.6.6": ` + msg,
			}},
		{name: "dnsConfig search with a newline", spec: withConfig(corev1.DNSClusterFirst, &corev1.PodDNSConfig{Searches: []string{"a.com\nnameserver"}}),
			want: []string{`spec.dnsConfig.searches[0]: Invalid value: "a.com\nnameserver": `}},
		{name: "stored option ratchets", spec: withCustom(custom, nil, "a\nb"), old: withCustom(custom, nil, "a\nb")},
		{name: "stored dnsConfig option ratchets", spec: withOptions(corev1.PodDNSConfigOption{Name: "a b", Value: str("c\nd")}),
			old: withOptions(corev1.PodDNSConfigOption{Name: "a b", Value: str("c\nd")})},
		{name: "a new bad option beside a stored one", spec: withCustom(custom, nil, "a\nb", "c\nd"), old: withCustom(custom, nil, "a\nb"),
			want: []string{`spec.dnsParams.custom.options[1]: Invalid value: "c\nd": ` + msg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := rendered(ValidatePodSpecDNS(tt.spec, tt.old, specPath(), allOn))
			if len(errs) != len(tt.want) {
				t.Fatalf("errors %q, want %d: %q", errs, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(errs[i], w) {
					t.Errorf("error %d = %q, want prefix %q", i, errs[i], w)
				}
			}
		})
	}
}

// FuzzAcceptedSpecForms: a pod spec the API server accepts on create
// always gives the node agent a resolv.conf, never a refusal: the API and
// the agent apply one word rule, so no pod waits for ever on a value the
// API let through.
func FuzzAcceptedSpecForms(f *testing.F) {
	f.Add("Custom", "$(NAMESPACE).svc.$(CLUSTER)", "my.suffix", "10.0.0.1", "ndots:2", "edns0\nnameserver 6.6.6.6", uint8(2))
	f.Add("ClusterFirst", "a.com", "b.com", "1.2.3.4", "timeout", "1\n", uint8(1))
	f.Add("None", "a.com", "b\x00.com", "1.2.3.4", "rotate\t", "", uint8(1))
	f.Add("Custom", "x", "$(HOST)", "", "a\u2028b", "rotate", uint8(3))
	f.Fuzz(func(t *testing.T, policy, s1, s2, s3, o1, o2 string, shape uint8) {
		spec := fuzzSpec(policy, s1, s2, s3, o1, o2, shape)
		if len(ValidatePodSpecDNS(spec, nil, specPath(), allOn)) > 0 {
			return
		}
		pod := &dpcorev1.Pod{Spec: *spec}
		pod.Namespace, pod.Name = "ns", "p"
		node := resolvconf.Node{ClusterDomain: "cluster.local", ClusterDNS: []string{"10.96.0.10"}, NodeCache: []string{"169.254.20.10"},
			HostResolvConf: true, Host: resolvconf.Config{Nameservers: []string{"192.0.2.1"}, Searches: []string{"example.com"}}}
		if _, _, err := resolvconf.ForPod(pod, node); err != nil {
			t.Fatalf("accepted spec %#v refused by the agent: %v", spec, err)
		}
	})
}
