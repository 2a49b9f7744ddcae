package resolvconf

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const searchCut = "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: "

func numbered(from, to int) []string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprint(i))
	}
	return s
}

// TestFitSearches is kubelet's TestFormDNSSearchFitsLimits (k/k
// pkg/kubelet/network/dns/dns_test.go; its rows numbered #14-#19) on the limit step alone, plus its edges.
func TestFitSearches(t *testing.T) {
	t.Parallel()
	cluster := []string{"testNS.svc.TEST", "svc.TEST", "TEST"}
	// 128 + 15*127 characters and 15 separators: exactly 2048.
	var fits []string
	fits = append(fits, strings.Repeat("A", 128))
	for i := 0; i < 15; i++ {
		fits = append(fits, strings.Repeat(string(rune('B'+i)), 127))
	}
	thirtyTwo := append(append([]string{}, cluster...), numbered(4, 32)...)
	tests := []struct {
		name string
		in   []string
		want []string
		cut  bool
	}{
		{"#14 within limits", append(append([]string{}, cluster...), "AAA", "BBB"), append(append([]string{}, cluster...), "AAA", "BBB"), false},
		{"#15 entry over 253 dropped", append(append([]string{}, cluster...), "AAA", strings.Repeat("B", 256), "BBB"),
			append(append([]string{}, cluster...), "AAA", "BBB"), true},
		{"#16 exactly 2048", fits, fits, false},
		{"#17 2050 cuts from the end", append(append([]string{}, fits...), "B"), fits, true},
		{"#18 exactly 32", thirtyTwo, thirtyTwo, false},
		{"#19 33 keeps first 32", append(append([]string{}, thirtyTwo...), "33"), thirtyTwo, true},
		{"253 kept", []string{strings.Repeat("a", 253)}, []string{strings.Repeat("a", 253)}, false},
		{"count cut before long entries dropped", append([]string{strings.Repeat("x", 254)}, numbered(1, 32)...),
			numbered(1, 31), true},
		{"several entries cut for length", append(append([]string{}, fits[:15]...), "short", strings.Repeat("Z", 200)),
			append(append([]string{}, fits[:15]...), "short"), true},
		{"empty", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, w := fitSearches(tt.in)
			if !sameList(got, tt.want) {
				t.Errorf("got %d entries %q, want %d", len(got), got, len(tt.want))
			}
			var want []Warning
			if tt.cut {
				want = []Warning{{ReasonDNSConfigForming, searchCut + strings.Join(tt.want, " ")}}
			}
			assertWarnings(t, w, want)
		})
	}
}

// TestSearchLimitsThroughForPod runs #14, #15, #17 and #19 through ForPod:
// ClusterFirst makes the three cluster paths, the host file the rest.
func TestSearchLimitsThroughForPod(t *testing.T) {
	t.Parallel()
	node := func(host ...string) Node {
		return Node{ClusterDomain: "TEST", ClusterDNS: []string{"10.0.0.10"}, HostResolvConf: true, Host: Config{Searches: host}}
	}
	cluster := []string{"testNS.svc.TEST", "svc.TEST", "TEST"}
	var fits []string
	for i := 0; i < 13; i++ {
		fits = append(fits, strings.Repeat(string(rune('B'+i)), 150))
	}
	// 15+8+4 + 13*150 + 15 separators = 1992; pad to exactly 2048.
	fits = append(fits, strings.Repeat("P", 2048-1992-1))
	all := append(append([]string{}, cluster...), fits...)
	cf := corev1.DNSClusterFirst
	opts := []string{"ndots:5"}
	ns := []string{"10.0.0.10"}
	runPodCases(t, []podCase{
		{name: "#14", pod: newPod("testNS", cf), node: node("AAA", "BBB"),
			want: Config{Nameservers: ns, Searches: append(append([]string{}, cluster...), "AAA", "BBB"), Options: opts}},
		{name: "#15", pod: newPod("testNS", cf), node: node("AAA", strings.Repeat("B", 256), "BBB"),
			want:     Config{Nameservers: ns, Searches: append(append([]string{}, cluster...), "AAA", "BBB"), Options: opts},
			warnings: []Warning{{ReasonDNSConfigForming, searchCut + "testNS.svc.TEST svc.TEST TEST AAA BBB"}}},
		{name: "#16 exactly 2048", pod: newPod("testNS", cf), node: node(fits...),
			want: Config{Nameservers: ns, Searches: all, Options: opts}},
		{name: "#17 pod search cut first", pod: newPod("testNS", cf, withDNSConfig(&corev1.PodDNSConfig{Searches: []string{"B"}})), node: node(fits...),
			want:     Config{Nameservers: ns, Searches: all, Options: opts},
			warnings: []Warning{{ReasonDNSConfigForming, searchCut + strings.Join(all, " ")}}},
		{name: "#18", pod: newPod("testNS", cf), node: node(numbered(4, 32)...),
			want: Config{Nameservers: ns, Searches: append(append([]string{}, cluster...), numbered(4, 32)...), Options: opts}},
		{name: "#19", pod: newPod("testNS", cf), node: node(numbered(4, 33)...),
			want:     Config{Nameservers: ns, Searches: append(append([]string{}, cluster...), numbered(4, 32)...), Options: opts},
			warnings: []Warning{{ReasonDNSConfigForming, searchCut + "testNS.svc.TEST svc.TEST TEST " + strings.Join(numbered(4, 32), " ")}}},
		{name: "Default pods are cut too", pod: newPod("testNS", corev1.DNSDefault), node: node(numbered(1, 33)...),
			want:     Config{Searches: numbered(1, 32)},
			warnings: []Warning{{ReasonDNSConfigForming, searchCut + strings.Join(numbered(1, 32), " ")}}},
	})
}

// TestNameserverLimits is kubelet's TestFormDNSNameserversFitsLimits
// (same file; rows #20-#22), through the host file of a Default pod.
func TestNameserverLimits(t *testing.T) {
	t.Parallel()
	node := func(ns ...string) Node { return Node{HostResolvConf: true, Host: Config{Nameservers: ns}} }
	runPodCases(t, []podCase{
		{name: "#20 one", pod: newPod("testNS", corev1.DNSDefault), node: node("127.0.0.1"),
			want: Config{Nameservers: []string{"127.0.0.1"}}},
		{name: "#21 three", pod: newPod("testNS", corev1.DNSDefault), node: node("127.0.0.1", "10.0.0.10", "8.8.8.8"),
			want: Config{Nameservers: []string{"127.0.0.1", "10.0.0.10", "8.8.8.8"}}},
		{name: "#22 four", pod: newPod("testNS", corev1.DNSDefault), node: node("127.0.0.1", "10.0.0.10", "8.8.8.8", "1.2.3.4"),
			want: Config{Nameservers: []string{"127.0.0.1", "10.0.0.10", "8.8.8.8"}},
			warnings: []Warning{{ReasonDNSConfigForming,
				"Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 127.0.0.1 10.0.0.10 8.8.8.8"}}},
		{name: "pod nameservers cut after the cluster's", node: Node{ClusterDNS: []string{"10.0.0.10", "10.0.0.11"}},
			pod:  newPod("testNS", corev1.DNSClusterFirst, withDNSConfig(&corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "10.0.0.10", "9.9.9.9"}})),
			want: Config{Nameservers: []string{"10.0.0.10", "10.0.0.11", "1.1.1.1"}, Options: []string{"ndots:5"}},
			warnings: []Warning{{ReasonDNSConfigForming,
				"Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.10 10.0.0.11 1.1.1.1"}}},
		{name: "both limits: nameserver warning first", pod: newPod("testNS", corev1.DNSDefault),
			node: Node{HostResolvConf: true, Host: Config{Nameservers: []string{"a", "b", "c", "d"}, Searches: numbered(1, 33)}},
			want: Config{Nameservers: []string{"a", "b", "c"}, Searches: numbered(1, 32)},
			warnings: []Warning{
				{ReasonDNSConfigForming, "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: a b c"},
				{ReasonDNSConfigForming, searchCut + strings.Join(numbered(1, 32), " ")},
			}},
	})
}

func TestCheckHostLimits(t *testing.T) {
	t.Parallel()
	const path = "/etc/resolv.conf"
	long := strings.Repeat("a", 254)
	var wide []string
	for i := 0; i < 9; i++ {
		wide = append(wide, strings.Repeat(string(rune('a'+i)), 250))
	}
	tests := []struct {
		name   string
		search []string
		domain string
		want   string
	}{
		{"fine", []string{"a.example"}, "cluster.local", ""},
		{"29 with a cluster domain", numbered(1, 29), "cluster.local", ""},
		{"30 with a cluster domain", numbered(1, 30), "cluster.local",
			"Resolv.conf file '/etc/resolv.conf' contains search line consisting of more than 29 domains!"},
		{"32 without a cluster domain", numbered(1, 32), "", ""},
		{"33 without a cluster domain", numbered(1, 33), "",
			"Resolv.conf file '/etc/resolv.conf' contains search line consisting of more than 32 domains!"},
		{"long path", []string{"a.example", long}, "cluster.local",
			`Resolv.conf file "/etc/resolv.conf" contains a search path which length is more than allowed 253 chars!`},
		{"long line", wide, "cluster.local",
			"Resolv.conf file '/etc/resolv.conf' contains search line which length is more than allowed 2048 chars!"},
		{"first problem only", append(numbered(1, 30), long), "cluster.local",
			"Resolv.conf file '/etc/resolv.conf' contains search line consisting of more than 29 domains!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var want []Warning
			if tt.want != "" {
				want = []Warning{{ReasonCheckLimitsForResolvConf, tt.want}}
			}
			assertWarnings(t, CheckHostLimits(path, Config{Searches: tt.search}, tt.domain), want)
		})
	}
}
