package resolvconf

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestForPodRefusesLineInjection(t *testing.T) {
	node := Node{ClusterDomain: "cluster.local", ClusterDNS: []string{"10.0.0.10"}, HostResolvConf: true}
	value := "1\nnameserver 6.6.6.6"
	tests := []struct {
		name string
		spec dpcorev1.PodSpec
		want string
	}{
		{"option value", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirst,
			DNSConfig: &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &value}}}}},
			`option "ndots:1\nnameserver 6.6.6.6" contains whitespace`},
		{"option name", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirst,
			DNSConfig: &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "a b"}}}}},
			`option "a b" contains whitespace`},
		{"custom option", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: dpcorev1.DNSCustom},
			DNSParams: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Options: []string{"rotate\tx"}}}},
			`option "rotate\tx" contains whitespace`},
		{"search", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSNone,
			DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a\rb"}}}},
			`search "a\rb" contains whitespace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &dpcorev1.Pod{Spec: tt.spec}
			pod.Namespace, pod.Name = "ns", "p"
			_, _, err := ForPod(pod, node)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}
