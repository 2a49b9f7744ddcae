package resolvconf

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestMergeOptions is kubelet's TestMergeDNSOptions (k/k
// pkg/kubelet/network/dns/dns_test.go, #23-#25), which compares sets; here
// the order is fixed too.
func TestMergeOptions(t *testing.T) {
	t.Parallel()
	base := []string{"ndots:5", "debug"}
	tests := []struct {
		name string
		base []string
		pod  []corev1.PodDNSConfigOption
		want []string
	}{
		{"#23 no pod options", base, nil, []string{"ndots:5", "debug"}},
		{"#24 new options appended", base,
			[]corev1.PodDNSConfigOption{{Name: "single-request"}, {Name: "attempts", Value: ptr("3")}},
			[]string{"ndots:5", "debug", "single-request", "attempts:3"}},
		{"#25 pod value wins in base position", base,
			[]corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("3")}, {Name: "debug"}, {Name: "single-request"}, {Name: "attempts", Value: ptr("3")}},
			[]string{"ndots:3", "debug", "single-request", "attempts:3"}},
		{"empty value renders the name", []string{"timeout:2"},
			[]corev1.PodDNSConfigOption{{Name: "timeout", Value: ptr("")}}, []string{"timeout"}},
		{"base name with empty value", []string{"rotate:"}, nil, []string{"rotate"}},
		{"value with a colon kept whole", []string{"a:b:c"}, nil, []string{"a:b:c"}},
		{"duplicate pod names: last value, first position", nil,
			[]corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("1")}, {Name: "edns0"}, {Name: "ndots", Value: ptr("2")}},
			[]string{"ndots:2", "edns0"}},
		{"duplicate base names collapse", []string{"ndots:2", "rotate", "ndots:3"}, nil, []string{"ndots:3", "rotate"}},
		{"nothing", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mergeOptions(tt.base, tt.pod); !sameList(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMergeOptionsThroughForPod runs #23-#25 end to end: a Default pod whose
// host file has "options ndots:5 debug".
func TestMergeOptionsThroughForPod(t *testing.T) {
	t.Parallel()
	node := Node{HostResolvConf: true, Host: mustParse(t, "nameserver 10.0.0.1\noptions ndots:5 debug\n")}
	ns := []string{"10.0.0.1"}
	runPodCases(t, []podCase{
		{name: "#23", pod: newPod("testNS", corev1.DNSDefault, withDNSConfig(&corev1.PodDNSConfig{})), node: node,
			want: Config{Nameservers: ns, Options: []string{"ndots:5", "debug"}}},
		{name: "#24", node: node,
			pod: newPod("testNS", corev1.DNSDefault, withDNSConfig(&corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{
				{Name: "single-request"}, {Name: "attempts", Value: ptr("3")}}})),
			want: Config{Nameservers: ns, Options: []string{"ndots:5", "debug", "single-request", "attempts:3"}}},
		{name: "#25", node: node,
			pod: newPod("testNS", corev1.DNSDefault, withDNSConfig(&corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{
				{Name: "ndots", Value: ptr("3")}, {Name: "debug"}, {Name: "single-request"}, {Name: "attempts", Value: ptr("3")}}})),
			want: Config{Nameservers: ns, Options: []string{"ndots:3", "debug", "single-request", "attempts:3"}}},
		{name: "without dnsConfig host options stay verbatim", pod: newPod("testNS", corev1.DNSDefault),
			node: Node{HostResolvConf: true, Host: Config{Options: []string{"rotate:"}}},
			want: Config{Options: []string{"rotate:"}}},
	})
}

func TestOmitDuplicates(t *testing.T) {
	t.Parallel()
	in := []string{"a", "b", "a", "c", "b", "A"}
	got := omitDuplicates(in)
	if want := []string{"a", "b", "c", "A"}; !sameList(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if in[2] != "a" {
		t.Errorf("input modified: %q", in)
	}
}
