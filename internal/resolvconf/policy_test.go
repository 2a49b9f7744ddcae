package resolvconf

import (
	"fmt"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func newPod(ns string, policy corev1.DNSPolicy, opts ...func(*dpcorev1.Pod)) *dpcorev1.Pod {
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "uid-1"}}
	p.Spec.DNSPolicy = policy
	for _, o := range opts {
		o(p)
	}
	return p
}

func hostNet(p *dpcorev1.Pod) { p.Spec.HostNetwork = true }

func withDNSConfig(dc *corev1.PodDNSConfig) func(*dpcorev1.Pod) {
	return func(p *dpcorev1.Pod) { p.Spec.DNSConfig = dc }
}

func withCustom(search, options []string) func(*dpcorev1.Pod) {
	return func(p *dpcorev1.Pod) {
		p.Spec.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: search, Options: options}}
	}
}

func ptr(s string) *string { return &s }

func mustParse(t *testing.T, s string) Config {
	t.Helper()
	c, err := Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func missingDNS(policy string, fallback string) Warning {
	return Warning{ReasonMissingClusterDNS, `pod: "web_testNS(uid-1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "` +
		policy + `" policy. ` + fallback}
}

const fallbackDefault = `Falling back to "Default" policy.`

type podCase struct {
	name      string
	pod       *dpcorev1.Pod
	node      Node
	want      Config
	warnings  []Warning
	wantErr   string
	searchLen int // when > 0, check only the number of searches (and search[0] if want has one)
}

func runPodCases(t *testing.T, tests []podCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := ForPod(tt.pod, tt.node)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.searchLen > 0 {
				if len(got.Searches) != tt.searchLen {
					t.Errorf("len(searches) = %d, want %d: %q", len(got.Searches), tt.searchLen, got.Searches)
				}
				if len(tt.want.Searches) > 0 && got.Searches[0] != tt.want.Searches[0] {
					t.Errorf("searches[0] = %q, want %q", got.Searches[0], tt.want.Searches[0])
				}
				tt.want.Searches, got.Searches = nil, nil
			}
			assertConfig(t, got, tt.want)
			assertWarnings(t, warnings, tt.warnings)
		})
	}
}

// TestPolicyBase is kubelet's TestGetPodDNSType, observed through the
// nameserver each policy ends up with.
func TestPolicyBase(t *testing.T) {
	t.Parallel()
	node := Node{
		ClusterDomain:  "cluster.local",
		ClusterDNS:     []string{"10.0.0.10"},
		Host:           Config{Nameservers: []string{"8.8.8.8"}, Searches: []string{"host.domain"}, Options: []string{"rotate"}},
		HostResolvConf: true,
	}
	cluster := Config{
		Nameservers: []string{"10.0.0.10"},
		Searches:    []string{"testNS.svc.cluster.local", "svc.cluster.local", "cluster.local", "host.domain"},
		Options:     []string{"ndots:5"},
	}
	host := node.Host
	invalid := Warning{ReasonDNSConfigForming, `invalid DNSPolicy="invalidPolicy": falling back to "ClusterFirst"`}
	runPodCases(t, []podCase{
		{name: "ClusterFirst", pod: newPod("testNS", corev1.DNSClusterFirst), node: node, want: cluster},
		{name: "ClusterFirstWithHostNet", pod: newPod("testNS", corev1.DNSClusterFirstWithHostNet), node: node, want: cluster},
		{name: "ClusterFirstWithHostNet hostNetwork", pod: newPod("testNS", corev1.DNSClusterFirstWithHostNet, hostNet), node: node, want: cluster},
		{name: "Default", pod: newPod("testNS", corev1.DNSDefault), node: node, want: host},
		{name: "Default hostNetwork", pod: newPod("testNS", corev1.DNSDefault, hostNet), node: node, want: host},
		{name: "ClusterFirst hostNetwork is host", pod: newPod("testNS", corev1.DNSClusterFirst, hostNet), node: node, want: host},
		{name: "None", pod: newPod("testNS", corev1.DNSNone), node: node, want: Config{}},
		{name: "None hostNetwork", pod: newPod("testNS", corev1.DNSNone, hostNet), node: node, want: Config{}},
		{name: "empty policy is ClusterFirst", pod: newPod("testNS", ""), node: node, want: cluster},
		{name: "invalid policy falls back to cluster", pod: newPod("testNS", "invalidPolicy"), node: node, want: cluster,
			warnings: []Warning{invalid}},
		{name: "invalid policy ignores hostNetwork", pod: newPod("testNS", "invalidPolicy", hostNet), node: node, want: cluster,
			warnings: []Warning{invalid}},
		{name: "empty cluster domain keeps host searches", pod: newPod("testNS", corev1.DNSClusterFirst),
			node: Node{ClusterDNS: []string{"10.0.0.10"}, Host: host, HostResolvConf: true},
			want: Config{Nameservers: []string{"10.0.0.10"}, Searches: []string{"host.domain"}, Options: []string{"ndots:5"}}},
		{name: "host search duplicating a cluster path", pod: newPod("testNS", corev1.DNSClusterFirst),
			node: Node{ClusterDomain: "cluster.local", ClusterDNS: []string{"10.0.0.10"}, HostResolvConf: true,
				Host: Config{Searches: []string{"cluster.local", "a.example", "a.example"}}},
			want: Config{Nameservers: []string{"10.0.0.10"}, Searches: []string{"testNS.svc.cluster.local", "svc.cluster.local", "cluster.local", "a.example"}, Options: []string{"ndots:5"}}},
	})
}

// TestPodDNSCustomConfig is kubelet's TestGetPodDNSCustom (k/k
// pkg/kubelet/network/dns/dns_test.go; its cases numbered #26-#30).
func TestPodDNSCustomConfig(t *testing.T) {
	t.Parallel()
	node := Node{
		ClusterDomain:  "kubernetes.io",
		ClusterDNS:     []string{"10.0.0.10"},
		Host:           mustParse(t, "nameserver 8.8.8.8\nsearch host.domain\n"),
		HostResolvConf: true,
	}
	podOpts := []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("3")}, {Name: "debug"}}
	cfg := withDNSConfig(&corev1.PodDNSConfig{Nameservers: []string{"10.0.0.11"}, Searches: []string{"my.domain"}, Options: podOpts})
	cluster := Config{
		Nameservers: []string{"10.0.0.10", "10.0.0.11"},
		Searches:    []string{"testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io", "host.domain", "my.domain"},
		Options:     []string{"ndots:3", "debug"},
	}
	runPodCases(t, []podCase{
		{name: "#26 None without dnsConfig", pod: newPod("testNS", corev1.DNSNone), node: node, want: Config{}},
		{name: "#27 None with dnsConfig", node: node,
			pod: newPod("testNS", corev1.DNSNone, withDNSConfig(&corev1.PodDNSConfig{
				Nameservers: []string{"203.0.113.1"}, Searches: []string{"my.domain", "second.domain"}, Options: podOpts})),
			want: Config{Nameservers: []string{"203.0.113.1"}, Searches: []string{"my.domain", "second.domain"}, Options: []string{"ndots:3", "debug"}}},
		{name: "#28 ClusterFirst", pod: newPod("testNS", corev1.DNSClusterFirst, cfg), node: node, want: cluster},
		{name: "#29 ClusterFirstWithHostNet hostNetwork", pod: newPod("testNS", corev1.DNSClusterFirstWithHostNet, hostNet, cfg), node: node, want: cluster},
		{name: "#30 Default", pod: newPod("testNS", corev1.DNSDefault, cfg), node: node,
			want: Config{Nameservers: []string{"8.8.8.8", "10.0.0.11"}, Searches: []string{"host.domain", "my.domain"}, Options: []string{"ndots:3", "debug"}}},
		{name: "pod search passed through unvalidated", node: node,
			pod:  newPod("testNS", corev1.DNSNone, withDNSConfig(&corev1.PodDNSConfig{Searches: []string{".", "a.example", "a.example"}})),
			want: Config{Searches: []string{".", "a.example"}}},
	})
}

// TestNoHostResolvConf is kubelet's testGetPodDNS with --resolv-conf=""
// (k/k pkg/kubelet/network/dns/dns_test.go; cases #31-#33) plus the
// node-IP families and #34 (a real host file).
func TestNoHostResolvConf(t *testing.T) {
	t.Parallel()
	node := Node{ClusterDomain: "kubernetes.io", ClusterDNS: []string{"203.0.113.1"}}
	loopback := Config{Nameservers: []string{"127.0.0.1"}, Searches: []string{"."}}
	dual := node
	dual.NodeIPs = []net.IP{net.ParseIP("192.0.2.10"), net.ParseIP("2001:db8::10")}

	hostSearch := make([]string, 10)
	for i := range hostSearch {
		hostSearch[i] = fmt.Sprintf("h%d.example", i)
	}
	withHost := Node{ClusterDomain: "kubernetes.io", ClusterDNS: []string{"203.0.113.1"}, HostResolvConf: true,
		Host: Config{Nameservers: []string{"192.0.2.53"}, Searches: hostSearch}}
	manyHost := withHost
	manyHost.Host.Searches = make([]string, 40)
	for i := range manyHost.Host.Searches {
		manyHost.Host.Searches[i] = fmt.Sprintf("m%d.example", i)
	}
	clusterOnly := []string{".svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io"}

	runPodCases(t, []podCase{
		{name: "#31 ClusterFirstWithHostNet", pod: newPod("", corev1.DNSClusterFirstWithHostNet, hostNet), node: node,
			want: Config{Nameservers: []string{"203.0.113.1"}, Searches: clusterOnly, Options: []string{"ndots:5"}}},
		{name: "#32 ClusterFirst hostNetwork", pod: newPod("", corev1.DNSClusterFirst, hostNet), node: node, want: loopback},
		{name: "#33 Default", pod: newPod("", corev1.DNSDefault, hostNet), node: node, want: loopback},
		{name: "dual-stack node IPs", pod: newPod("", corev1.DNSDefault), node: dual,
			want: Config{Nameservers: []string{"127.0.0.1", "::1"}, Searches: []string{"."}}},
		{name: "#34 cluster pod gets host searches plus three", pod: newPod("testNS", corev1.DNSClusterFirst), node: withHost,
			want:      Config{Nameservers: []string{"203.0.113.1"}, Searches: []string{"testNS.svc.kubernetes.io"}, Options: []string{"ndots:5"}},
			searchLen: len(hostSearch) + 3},
		{name: "#34 capped at 32", pod: newPod("testNS", corev1.DNSClusterFirst), node: manyHost,
			want: Config{Nameservers: []string{"203.0.113.1"}, Searches: []string{"testNS.svc.kubernetes.io"}, Options: []string{"ndots:5"}},
			warnings: []Warning{{ReasonDNSConfigForming, "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " +
				strings.Join(append([]string{"testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io"}, manyHost.Host.Searches[:29]...), " ")}},
			searchLen: 32},
	})
}

func TestMissingClusterDNS(t *testing.T) {
	t.Parallel()
	host := Config{Nameservers: []string{"1.2.3.4"}, Searches: []string{"foo.com"}, Options: []string{"ndots:1"}}
	node := Node{ClusterDomain: "cluster.local", Host: host, HostResolvConf: true}
	runPodCases(t, []podCase{
		{name: "ClusterFirst", pod: newPod("testNS", corev1.DNSClusterFirst), node: node, want: host,
			warnings: []Warning{missingDNS("ClusterFirst", fallbackDefault)}},
		{name: "ClusterFirstWithHostNet", pod: newPod("testNS", corev1.DNSClusterFirstWithHostNet, hostNet), node: node, want: host,
			warnings: []Warning{missingDNS("ClusterFirstWithHostNet", fallbackDefault)}},
		{name: "ClusterFirstWithAutopath", pod: newPod("testNS", dpcorev1.DNSClusterFirstWithAutopath), node: node, want: host,
			warnings: []Warning{missingDNS("ClusterFirstWithAutopath", fallbackDefault)}},
		{name: "invalid policy", pod: newPod("testNS", "Bogus"), node: node, want: host,
			warnings: []Warning{
				{ReasonDNSConfigForming, `invalid DNSPolicy="Bogus": falling back to "ClusterFirst"`},
				missingDNS("Bogus", fallbackDefault),
			}},
		{name: "Custom keeps its search and options", node: node,
			pod:      newPod("testNS", dpcorev1.DNSCustom, withCustom([]string{"$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"}, []string{"ndots:2"})),
			want:     Config{Nameservers: []string{"1.2.3.4"}, Searches: []string{"testNS.svc.cluster.local", "foo.com"}, Options: []string{"ndots:2"}},
			warnings: []Warning{missingDNS("Custom", "Falling back to the host's nameservers.")}},
		{name: "Custom without host file uses loopback", node: Node{ClusterDomain: "cluster.local"},
			pod:      newPod("testNS", dpcorev1.DNSCustom, withCustom([]string{"a.example", "$(HOST)"}, nil)),
			want:     Config{Nameservers: []string{"127.0.0.1"}, Searches: []string{"a.example"}},
			warnings: []Warning{missingDNS("Custom", "Falling back to the host's nameservers.")}},
	})
}

// TestCustom covers dnsPolicy Custom (docs/pod-dns.md).
func TestCustom(t *testing.T) {
	t.Parallel()
	seedNode := Node{
		ClusterDomain:  "cluster.local",
		ClusterDNS:     []string{"10.240.0.10"},
		Host:           mustParse(t, "nameserver 1.2.3.4\nsearch foo.com bar.com\noptions ndots:1\n"),
		HostResolvConf: true,
	}
	seedSearch := []string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"}
	seed := withCustom(seedSearch, []string{"ndots:2"})
	noHostSearch := seedNode
	noHostSearch.Host = mustParse(t, "nameserver 1.2.3.4\n")

	longHost := seedNode
	longHost.Host.Searches = make([]string, 31)
	for i := range longHost.Host.Searches {
		longHost.Host.Searches[i] = fmt.Sprintf("h%02d.example", i)
	}
	truncated := append([]string{"ns1.svc.cluster.local", "my.dns.search.suffix"}, longHost.Host.Searches[:30]...)

	runPodCases(t, []podCase{
		{name: "docs example", pod: newPod("ns1", dpcorev1.DNSCustom, seed), node: seedNode,
			want: Config{Nameservers: []string{"10.240.0.10"}, Searches: []string{"ns1.svc.cluster.local", "my.dns.search.suffix", "foo.com", "bar.com"}, Options: []string{"ndots:2"}}},
		{name: "hostNetwork changes nothing", pod: newPod("ns1", dpcorev1.DNSCustom, seed, hostNet), node: seedNode,
			want: Config{Nameservers: []string{"10.240.0.10"}, Searches: []string{"ns1.svc.cluster.local", "my.dns.search.suffix", "foo.com", "bar.com"}, Options: []string{"ndots:2"}}},
		{name: "$(HOST) with empty host search", pod: newPod("ns1", dpcorev1.DNSCustom, seed), node: noHostSearch,
			want: Config{Nameservers: []string{"10.240.0.10"}, Searches: []string{"ns1.svc.cluster.local", "my.dns.search.suffix"}, Options: []string{"ndots:2"}}},
		{name: "$(HOST) without host file", pod: newPod("ns1", dpcorev1.DNSCustom, seed), node: Node{ClusterDomain: "cluster.local", ClusterDNS: []string{"10.240.0.10"}},
			want: Config{Nameservers: []string{"10.240.0.10"}, Searches: []string{"ns1.svc.cluster.local", "my.dns.search.suffix"}, Options: []string{"ndots:2"}}},
		{name: "host options are not inherited", pod: newPod("ns1", dpcorev1.DNSCustom, withCustom([]string{"$(HOST)"}, nil)), node: seedNode,
			want: Config{Nameservers: []string{"10.240.0.10"}, Searches: []string{"foo.com", "bar.com"}}},
		{name: "options copied in order", pod: newPod("ns1", dpcorev1.DNSCustom, withCustom(nil, []string{"timeout:1", "ndots:2", "rotate"})), node: seedNode,
			want: Config{Nameservers: []string{"10.240.0.10"}, Options: []string{"timeout:1", "ndots:2", "rotate"}}},
		{name: "duplicate after $(HOST) expansion kept once", pod: newPod("ns1", dpcorev1.DNSCustom, withCustom([]string{"foo.com", "$(HOST)"}, nil)), node: seedNode,
			want: Config{Nameservers: []string{"10.240.0.10"}, Searches: []string{"foo.com", "bar.com"}}},
		{name: "with dnsConfig", node: seedNode,
			pod: newPod("ns1", dpcorev1.DNSCustom, seed, withDNSConfig(&corev1.PodDNSConfig{
				Nameservers: []string{"10.240.0.11", "10.240.0.10"},
				Searches:    []string{"extra.example", "foo.com"},
				Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("3")}, {Name: "edns0"}},
			})),
			want: Config{
				Nameservers: []string{"10.240.0.10", "10.240.0.11"},
				Searches:    []string{"ns1.svc.cluster.local", "my.dns.search.suffix", "foo.com", "bar.com", "extra.example"},
				Options:     []string{"ndots:3", "edns0"},
			}},
		{name: "truncated after $(HOST) expansion", pod: newPod("ns1", dpcorev1.DNSCustom, seed), node: longHost,
			want:     Config{Nameservers: []string{"10.240.0.10"}, Searches: truncated, Options: []string{"ndots:2"}},
			warnings: []Warning{{ReasonDNSConfigForming, "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(truncated, " ")}}},
		{name: "nil dnsParams", pod: newPod("ns1", dpcorev1.DNSCustom), node: seedNode,
			wantErr: `spec.dnsParams: required when dnsPolicy is "Custom"`},
		{name: "nil dnsParams.custom", node: seedNode,
			pod:     newPod("ns1", dpcorev1.DNSCustom, func(p *dpcorev1.Pod) { p.Spec.DNSParams = &dpcorev1.PodDNSParams{} }),
			wantErr: `spec.dnsParams.custom: required when dnsPolicy is "Custom"`},
		{name: "bad substitution", node: seedNode,
			pod:     newPod("ns1", dpcorev1.DNSCustom, withCustom([]string{"a.example", "$(HOST)", "b.example"}, nil)),
			wantErr: `spec.dnsParams.custom.search[1] "$(HOST)": "$(HOST)" must be the last search entry`},
	})
}

// TestAutopath covers dnsPolicy ClusterFirstWithAutopath (docs/autopath.md).
func TestAutopath(t *testing.T) {
	t.Parallel()
	node := Node{
		ClusterDomain:  "cluster.local",
		ClusterDNS:     []string{"10.0.0.10"},
		NodeCache:      []string{"169.254.20.10"},
		Host:           Config{Nameservers: []string{"8.8.8.8"}, Searches: []string{"foo.com", "bar.com"}, Options: []string{"rotate"}},
		HostResolvConf: true,
	}
	noCache := node
	noCache.NodeCache = nil
	noDomain := node
	noDomain.ClusterDomain = ""
	dotted := node
	dotted.ClusterDomain = "cluster.local."
	ap := "search.ns1.cluster.local.ap.k8s.io"
	want := Config{Nameservers: []string{"169.254.20.10"}, Searches: []string{ap}, Options: []string{"ndots:5"}}
	runPodCases(t, []podCase{
		{name: "node cache preferred", pod: newPod("ns1", dpcorev1.DNSClusterFirstWithAutopath), node: node, want: want},
		{name: "hostNetwork changes nothing", pod: newPod("ns1", dpcorev1.DNSClusterFirstWithAutopath, hostNet), node: node, want: want},
		{name: "cluster DNS without node cache", pod: newPod("ns1", dpcorev1.DNSClusterFirstWithAutopath), node: noCache,
			want: Config{Nameservers: []string{"10.0.0.10"}, Searches: []string{ap}, Options: []string{"ndots:5"}}},
		{name: "node cache without cluster DNS", pod: newPod("ns1", dpcorev1.DNSClusterFirstWithAutopath),
			node: Node{ClusterDomain: "cluster.local", NodeCache: []string{"169.254.20.10"}}, want: want},
		{name: "trailing dot on cluster domain", pod: newPod("ns1", dpcorev1.DNSClusterFirstWithAutopath), node: dotted, want: want},
		{name: "with dnsConfig", node: node,
			pod: newPod("ns1", dpcorev1.DNSClusterFirstWithAutopath, withDNSConfig(&corev1.PodDNSConfig{
				Nameservers: []string{"10.0.0.10"},
				Searches:    []string{"extra.example"},
				Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}, {Name: "single-request-reopen"}},
			})),
			want: Config{Nameservers: []string{"169.254.20.10", "10.0.0.10"}, Searches: []string{ap, "extra.example"}, Options: []string{"ndots:2", "single-request-reopen"}}},
		{name: "no cluster domain", pod: newPod("ns1", dpcorev1.DNSClusterFirstWithAutopath), node: noDomain,
			wantErr: `dnsPolicy "ClusterFirstWithAutopath" needs the node's cluster domain (--cluster-domain) to form search.<namespace>.<cluster-domain>.ap.k8s.io`},
		{name: "no namespace", pod: newPod("", dpcorev1.DNSClusterFirstWithAutopath), node: node,
			wantErr: `dnsPolicy "ClusterFirstWithAutopath" needs the pod's namespace to form search.<namespace>.cluster.local.ap.k8s.io`},
	})
}

func TestForPodNilPod(t *testing.T) {
	t.Parallel()
	if _, _, err := ForPod(nil, Node{}); err == nil {
		t.Fatal("want an error for a nil pod")
	}
}

// TestForPodLeavesNodeAlone guards against a pod's merge or truncation
// writing into the node's slices, which every later pod would inherit.
func TestForPodLeavesNodeAlone(t *testing.T) {
	t.Parallel()
	host := make([]string, 40, 64)
	for i := range host {
		host[i] = fmt.Sprintf("h%d.example", i)
	}
	servers := make([]string, 2, 8)
	servers[0], servers[1] = "192.0.2.1", "192.0.2.2"
	node := Node{ClusterDomain: "cluster.local", ClusterDNS: servers[:1:8], HostResolvConf: true,
		Host: Config{Nameservers: servers, Searches: host, Options: []string{"rotate"}}}
	before := fmt.Sprint(node)
	cfg := withDNSConfig(&corev1.PodDNSConfig{Nameservers: []string{"x1", "x2", "x3"}, Searches: []string{"pod.example"},
		Options: []corev1.PodDNSConfigOption{{Name: "rotate", Value: ptr("1")}}})
	for _, p := range []corev1.DNSPolicy{corev1.DNSDefault, corev1.DNSClusterFirst, dpcorev1.DNSClusterFirstWithAutopath} {
		if _, _, err := ForPod(newPod("ns1", p, cfg), node); err != nil {
			t.Fatal(err)
		}
	}
	if after := fmt.Sprint(node); after != before {
		t.Errorf("node changed:\n%s\n%s", before, after)
	}
	// Appends within spare capacity would not show in the node's slices.
	for _, s := range append(host[len(host):cap(host)], servers[len(servers):cap(servers)]...) {
		if s != "" {
			t.Fatalf("spare capacity of a node slice was written: %q", s)
		}
	}
}
