package resolvconf

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// FuzzForPod: every policy, known or not, with arbitrary search entries in
// every place a search can come from, never panics and always respects
// kubelet's limits.
func FuzzForPod(f *testing.F) {
	f.Add("ClusterFirst", false, "foo.com,bar.com", "my.domain", "$(NAMESPACE).svc.$(CLUSTER),$(HOST)", "ns1", "cluster.local", uint8(1), uint8(0))
	f.Add("Custom", true, strings.Repeat("x", 300)+",a", "b", "$(HOST)", "ns1", "", uint8(0), uint8(5))
	f.Add("ClusterFirstWithAutopath", false, "", "", "", "ns1", "cluster.local", uint8(2), uint8(2))
	f.Add("None", false, "", strings.Repeat(strings.Repeat("y", 250)+",", 40), "", "", "", uint8(0), uint8(9))
	f.Add("Bogus", true, ".,..", ".", "", "", ".", uint8(4), uint8(1))
	f.Fuzz(func(t *testing.T, policy string, hostNetwork bool, hostSearch, podSearch, custom, namespace, domain string, nClusterDNS, nPodNS uint8) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		node := Node{
			ClusterDomain:  domain,
			ClusterDNS:     servers("10.0.0.", int(nClusterDNS%5)),
			HostResolvConf: len(hostSearch)%2 == 0,
			Host:           Config{Nameservers: servers("192.0.2.", 4), Searches: split(hostSearch), Options: []string{"ndots:1"}},
		}
		if nClusterDNS%3 == 1 {
			node.NodeCache = servers("169.254.20.", 2)
		}
		pod := newPod(namespace, corev1.DNSPolicy(policy))
		pod.Spec.HostNetwork = hostNetwork
		pod.Spec.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: split(custom), Options: []string{"ndots:2"}}}
		if podSearch != "" || nPodNS > 0 {
			pod.Spec.DNSConfig = &corev1.PodDNSConfig{
				Nameservers: servers("198.51.100.", int(nPodNS%8)),
				Searches:    split(podSearch),
				Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: &domain}},
			}
		}
		c, _, err := ForPod(pod, node)
		if err != nil {
			return
		}
		if len(c.Nameservers) > maxNameservers {
			t.Fatalf("%d nameservers", len(c.Nameservers))
		}
		if len(c.Searches) > maxSearchPaths {
			t.Fatalf("%d searches", len(c.Searches))
		}
		if n := len(strings.Join(c.Searches, " ")); n > maxSearchListChars {
			t.Fatalf("search line of %d chars", n)
		}
		for _, s := range c.Searches {
			if len(s) > maxSearchPathLen {
				t.Fatalf("search path of %d chars", len(s))
			}
		}
	})
}

func servers(prefix string, n int) []string {
	var s []string
	for i := 1; i <= n; i++ {
		s = append(s, prefix+string(rune('0'+i)))
	}
	return s
}
