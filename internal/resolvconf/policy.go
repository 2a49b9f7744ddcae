package resolvconf

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// Node is what the node agent knows about its node: the kubelet flags that
// shape pod DNS.
type Node struct {
	ClusterDomain string   // --cluster-domain, e.g. cluster.local; "" allowed, as in kubelet
	ClusterDNS    []string // --cluster-dns IPs
	// NodeCache are the node-local cache addresses. Autopath pods must reach
	// the cache, which adds the search list the cluster DNS expands with.
	NodeCache []string
	Host      Config // parsed host resolv.conf
	// HostResolvConf false is kubelet's --resolv-conf="" case: host-based
	// pods get a loopback nameserver per node IP family and "search .".
	HostResolvConf bool
	NodeIPs        []net.IP
}

// Warning is an event the agent emits on the pod, as kubelet does.
type Warning struct {
	Reason  string // ReasonDNSConfigForming or ReasonMissingClusterDNS
	Message string
}

// defaultNdots is kubelet's: enough dots that "_dns._udp.kube-dns.default.svc"
// still goes through the search list.
const defaultNdots = "ndots:5"

// ForPod computes the pod's resolver config for its dnsPolicy on node, with
// spec.dnsConfig merged and kubelet's limits applied. Warnings are events to
// record on the pod; an error means the pod's sandbox cannot be set up.
func ForPod(pod *dpcorev1.Pod, node Node) (Config, []Warning, error) {
	if pod == nil {
		return Config{}, nil, errors.New("resolvconf: nil pod")
	}
	// Before base: a bad word in dnsParams would otherwise surface as an
	// expansion error that does not say what to do.
	if err := checkSpecWords(&pod.Spec); err != nil {
		return Config{}, nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c, warnings, err := base(pod, node)
	if err != nil {
		return Config{}, nil, err
	}
	if pod.Spec.DNSConfig != nil {
		c = appendDNSConfig(c, pod.Spec.DNSConfig)
	}
	var w []Warning
	c.Nameservers, w = fitNameservers(c.Nameservers)
	warnings = append(warnings, w...)
	c.Searches, w = fitSearches(c.Searches)
	warnings = append(warnings, w...)
	if err := checkWords(c); err != nil {
		return Config{}, nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return c, warnings, nil
}

// base returns the policy's starting config, always a copy the caller may
// modify.
func base(pod *dpcorev1.Pod, node Node) (Config, []Warning, error) {
	switch policy := pod.Spec.DNSPolicy; policy {
	case corev1.DNSNone:
		return Config{}, nil, nil
	case corev1.DNSDefault:
		return hostBase(node), nil, nil
	case corev1.DNSClusterFirst, "":
		// "" is what an undefaulted manifest (e.g. "dnsplane resolvconf -f")
		// carries; the API server would have defaulted it to ClusterFirst.
		if pod.Spec.HostNetwork {
			// kubelet silently gives host-network pods the host's DNS
			// unless they ask for ClusterFirstWithHostNet.
			return hostBase(node), nil, nil
		}
		c, w := clusterBase(pod, node, corev1.DNSClusterFirst)
		return c, w, nil
	case corev1.DNSClusterFirstWithHostNet:
		c, w := clusterBase(pod, node, policy)
		return c, w, nil
	case dpcorev1.DNSCustom:
		return customBase(pod, node)
	case dpcorev1.DNSClusterFirstWithAutopath:
		return autopathBase(pod, node)
	default:
		// The API server rejects unknown policies; a pod that still has one
		// (an older or foreign API server) gets kubelet's fallback.
		w := Warning{
			Reason:  ReasonDNSConfigForming,
			Message: fmt.Sprintf("invalid DNSPolicy=%q: falling back to %q", policy, corev1.DNSClusterFirst),
		}
		c, more := clusterBase(pod, node, policy)
		return c, append([]Warning{w}, more...), nil
	}
}

// hostSearch is the node's search list as cluster pods inherit it: with no
// host file kubelet has none (the "." of hostBase is for host pods only).
func hostSearch(node Node) []string {
	if !node.HostResolvConf {
		return nil
	}
	return node.Host.Searches
}

func hostBase(node Node) Config {
	if node.HostResolvConf {
		return node.Host.clone()
	}
	// "nameserver on the local machine" is what a resolver assumes with no
	// nameserver line; spelling it out stops the runtime from copying the
	// node's own file instead.
	var c Config
	for _, ip := range node.NodeIPs {
		if ip != nil && ip.To4() == nil {
			c.Nameservers = append(c.Nameservers, "::1")
		} else {
			c.Nameservers = append(c.Nameservers, "127.0.0.1")
		}
	}
	if len(c.Nameservers) == 0 {
		c.Nameservers = []string{"127.0.0.1"}
	}
	c.Searches = []string{"."}
	return c
}

func clusterBase(pod *dpcorev1.Pod, node Node, policy corev1.DNSPolicy) (Config, []Warning) {
	if len(node.ClusterDNS) == 0 {
		return hostBase(node), []Warning{missingClusterDNS(pod, policy, fmt.Sprintf("Falling back to %q policy.", corev1.DNSDefault))}
	}
	return Config{
		Nameservers: slices.Clone(node.ClusterDNS),
		Searches:    clusterSearches(pod.Namespace, node.ClusterDomain, hostSearch(node)),
		Options:     []string{defaultNdots},
	}, nil
}

func clusterSearches(namespace, domain string, host []string) []string {
	if domain == "" {
		return slices.Clone(host)
	}
	s := []string{namespace + ".svc." + domain, "svc." + domain, domain}
	return omitDuplicates(append(s, host...))
}

// customBase builds a Custom pod's config from spec.dnsParams.custom
// (docs/pod-dns.md, "dnsPolicy: Custom"). The pod chose its search list, so losing the cluster DNS costs it
// only the nameservers, not the list.
func customBase(pod *dpcorev1.Pod, node Node) (Config, []Warning, error) {
	params := pod.Spec.DNSParams
	if params == nil {
		return Config{}, nil, fmt.Errorf("spec.dnsParams: required when dnsPolicy is %q", dpcorev1.DNSCustom)
	}
	if params.Custom == nil {
		return Config{}, nil, fmt.Errorf("spec.dnsParams.custom: required when dnsPolicy is %q", dpcorev1.DNSCustom)
	}
	searches, err := dnsparams.Expand(params.Custom.Search, dnsparams.Values{
		Namespace:     pod.Namespace,
		ClusterDomain: node.ClusterDomain,
		HostSearch:    hostSearch(node),
	})
	if err != nil {
		// Expand names the entry as search[i]; prefix the rest of the path.
		return Config{}, nil, fmt.Errorf("spec.dnsParams.custom.%w", err)
	}
	c := Config{
		Nameservers: slices.Clone(node.ClusterDNS),
		// Duplicates (a custom entry repeated by $(HOST)) would only spend
		// the search limits on identical queries.
		Searches: omitDuplicates(searches),
		Options:  slices.Clone(params.Custom.Options),
	}
	if len(c.Nameservers) > 0 {
		return c, nil, nil
	}
	c.Nameservers = hostBase(node).Nameservers
	return c, []Warning{missingClusterDNS(pod, dpcorev1.DNSCustom, "Falling back to the host's nameservers.")}, nil
}

// autopathBase gives the pod one search path that the node cache recognises
// and the cluster DNS expands server side (docs/autopath.md), so a short name costs
// one query per record type instead of one per search path.
func autopathBase(pod *dpcorev1.Pod, node Node) (Config, []Warning, error) {
	servers := node.NodeCache
	if len(servers) == 0 {
		// Without the cache the cluster DNS still expands the name, with
		// the cluster paths only (docs/autopath.md).
		servers = node.ClusterDNS
	}
	if len(servers) == 0 {
		return hostBase(node), []Warning{missingClusterDNS(pod, dpcorev1.DNSClusterFirstWithAutopath, fmt.Sprintf("Falling back to %q policy.", corev1.DNSDefault))}, nil
	}
	domain := strings.TrimSuffix(node.ClusterDomain, ".")
	if domain == "" {
		return Config{}, nil, fmt.Errorf("dnsPolicy %q needs the node's cluster domain (--cluster-domain) to form search.<namespace>.<cluster-domain>.%s", dpcorev1.DNSClusterFirstWithAutopath, dpcorev1.AutopathZone)
	}
	if pod.Namespace == "" {
		return Config{}, nil, fmt.Errorf("dnsPolicy %q needs the pod's namespace to form search.<namespace>.%s.%s", dpcorev1.DNSClusterFirstWithAutopath, domain, dpcorev1.AutopathZone)
	}
	return Config{
		Nameservers: slices.Clone(servers),
		Searches:    []string{searchpath.SearchName(pod.Namespace, domain)},
		Options:     []string{defaultNdots},
	}, nil, nil
}

// missingClusterDNS is kubelet's pod event text, so operators searching for
// it find dnsplane pods too.
func missingClusterDNS(pod *dpcorev1.Pod, policy corev1.DNSPolicy, fallback string) Warning {
	ref := fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
	return Warning{
		Reason:  ReasonMissingClusterDNS,
		Message: fmt.Sprintf("pod: %q. kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. %s", ref, policy, fallback),
	}
}
