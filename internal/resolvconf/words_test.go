package resolvconf

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// TestForPodRefusesLineInjection: a pod stored with a DNS field that
// would not stay one word of its resolv.conf (before the API server
// refused it, or by another API server) is refused with the field's path,
// the rule and what to do.
func TestForPodRefusesLineInjection(t *testing.T) {
	t.Parallel()
	node := Node{ClusterDomain: "cluster.local", ClusterDNS: []string{"10.0.0.10"}, HostResolvConf: true}
	value := "1\nnameserver 6.6.6.6"
	tests := []struct {
		name string
		spec dpcorev1.PodSpec
		want string
	}{
		{"option value", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirst,
			DNSConfig: &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &value}}}}},
			`spec.dnsConfig.options[0].value: Invalid value: "1\nnameserver 6.6.6.6": must be a single word`},
		{"option name", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirst,
			DNSConfig: &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "a b"}}}}},
			`spec.dnsConfig.options[0].name: Invalid value: "a b": must be a single word`},
		{"custom option", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: dpcorev1.DNSCustom},
			DNSParams: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Options: []string{"rotate\tx"}}}},
			`spec.dnsParams.custom.options[0]: Invalid value: "rotate\tx": must be a single word`},
		{"custom option newline", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: dpcorev1.DNSCustom},
			DNSParams: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Options: []string{"rotate", "edns0\nnameserver 6.6.6.6"}}}},
			`spec.dnsParams.custom.options[1]: Invalid value: "edns0\nnameserver 6.6.6.6": must be a single word`},
		{"custom search", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: dpcorev1.DNSCustom},
			DNSParams: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"$(NAMESPACE).svc.$(CLUSTER)\x00"}}}},
			`spec.dnsParams.custom.search[0]: Invalid value: "$(NAMESPACE).svc.$(CLUSTER)\x00": must be a single word`},
		{"search", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSNone,
			DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a\rb"}}}},
			`spec.dnsConfig.searches[0]: Invalid value: "a\rb": must be a single word`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := &dpcorev1.Pod{Spec: tt.spec}
			pod.Namespace, pod.Name = "ns", "p"
			_, _, err := ForPod(pod, node)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
			// The agent's event and condition carry this message: it
			// must say what to do, since the spec cannot change.
			if !strings.Contains(err.Error(), "delete the pod and create it") {
				t.Errorf("err = %v, want it to say the pod must be recreated", err)
			}
		})
	}
}
