// Package dnsspec holds the rules of the operator.dnsplane.io/v1 DNS
// resource: its defaults and its validation, as pure functions over the
// API types returning field errors in Kubernetes' wording.
//
// It is the one implementation of those rules. The API server's DNS
// strategy (internal/registry/operator/dns) runs them on every create and
// update, and so does `dnsplane validate`; the Corefile renderer
// (internal/operator/render) runs them again on what it reads, because a
// DNS stored before these rules existed may break them, and leaves out
// what fails. docs/dns-operator.md lists the rules.
//
// The package links neither client-go nor CoreDNS: the renderer that
// imports it must stay pure.
package dnsspec

import (
	"strings"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// DefaultClusterDomain is the cluster domain when none is configured, as
// kubelet's and CoreDNS's Kubernetes examples use.
const DefaultClusterDomain = "cluster.local"

// AutopathZone is the zone of the search-path names autopath pods query
// (plugin/pkg/searchpath.Zone without its trailing dot; not imported here
// because that package links miekg/dns). The cluster DNS's searchexpand
// plugin answers it, so no forward plugin may take it over.
const AutopathZone = "ap.k8s.io"

// MaxNameServers is the most nameservers one forward plugin, or the
// upstream resolvers, may list: CoreDNS's forward plugin refuses more than
// 15 upstreams ("more than 15 TOs configured"), and the API's limit is the
// same (docs/dns-operator.md, "Validation").
const MaxNameServers = 15

// MaxForwardPlugins is the most forward plugins a spec may list: with
// every entry as long as the rules allow (253-character domains, 15 IPv6
// nameservers, TLS), the DNS object with a status listing each
// nameserver's health, plus kubectl's last-applied annotation, still fits
// in the 1.5 MiB etcd stores per object, and the spec in the 256 KiB of
// annotations; 200 does not. docs/dns-operator.md ("Size limits") has the
// measurements, also of what the cluster DNS's memory does with N.
const MaxForwardPlugins = 150

// The ports nameservers listen on when their entry names none.
const (
	DNSPort    = 53  // cleartext DNS
	DNSTLSPort = 853 // DNS over TLS (RFC 7858)
)

// ClusterDomain normalises a configured cluster domain as the cluster DNS
// Corefile does (lower case, no surrounding dots), with the default for
// an empty one.
func ClusterDomain(cd string) string {
	cd = strings.ToLower(strings.Trim(cd, "."))
	if cd == "" {
		return DefaultClusterDomain
	}
	return cd
}

// The values of each enumeration, in the order error messages list them.
// Read-only.
var (
	policies = []operatorv1.ForwardPolicy{
		operatorv1.ForwardPolicyRandom, operatorv1.ForwardPolicyRoundRobin, operatorv1.ForwardPolicySequential,
	}
	logLevels = []operatorv1.DNSLogLevel{
		operatorv1.DNSLogLevelNormal, operatorv1.DNSLogLevelDebug, operatorv1.DNSLogLevelTrace,
	}
	managementStates   = []operatorv1.ManagementState{operatorv1.Managed, operatorv1.Unmanaged}
	upstreamTypes      = []operatorv1.UpstreamType{operatorv1.NetworkResolverType, operatorv1.SystemResolvConfType}
	transports         = []operatorv1.DNSTransport{operatorv1.CleartextTransport, operatorv1.TLSTransport}
	protocolStrategies = []operatorv1.ProtocolStrategy{operatorv1.ProtocolStrategyDefault, operatorv1.ProtocolStrategyTCP}
)

// IsTLS reports whether tc selects DNS over TLS.
func IsTLS(tc *operatorv1.DNSTransportConfig) bool {
	return tc != nil && tc.Transport == operatorv1.TLSTransport
}
