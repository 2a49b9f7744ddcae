package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultName is the name of the only DNS object: the resource is a
// singleton, and the operator reconciles the object of this name alone.
const DefaultName = "default"

// DNS configures the cluster DNS: which domains are forwarded to which
// nameservers, where everything else is resolved, how answers are cached
// and what is logged. There is one, named "default".
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DNS struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata. The name must be "default".
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired cluster DNS configuration.
	// +optional
	Spec DNSSpec `json:"spec,omitempty"`
	// Status is the observed state of the cluster DNS, written by the
	// operator.
	// +optional
	Status DNSStatus `json:"status,omitempty"`
}

// DNSList is a list of DNS objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DNSList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DNS `json:"items"`
}

// DNSSpec is the desired cluster DNS configuration.
type DNSSpec struct {
	// PluginConfig configures CoreDNS plugins of the cluster DNS; today the
	// forward plugin, one server block per forwarded domain.
	// +optional
	PluginConfig PluginConfig `json:"pluginConfig,omitempty"`

	// UpstreamResolvers are the resolvers of every name that is neither in
	// the cluster domain nor in a forwarded domain (the "." zone). Defaults
	// to the node's /etc/resolv.conf, tried in order.
	// +optional
	// +kubebuilder:default={}
	UpstreamResolvers UpstreamResolvers `json:"upstreamResolvers,omitempty"`

	// Cache sets how long the cluster DNS caches answers from forwarders and
	// upstream resolvers. Unset TTLs take the defaults (30s each).
	// +optional
	Cache *DNSCache `json:"cache,omitempty"`

	// LogLevel selects which queries CoreDNS logs: Normal logs the answers
	// that are errors, Debug adds NXDOMAIN and NODATA answers, Trace logs
	// every query.
	// +optional
	// +kubebuilder:validation:Enum=Normal;Debug;Trace
	// +kubebuilder:default=Normal
	LogLevel DNSLogLevel `json:"logLevel,omitempty"`

	// ManagementState is Managed when the operator reconciles the cluster
	// DNS from this resource, and Unmanaged when it only reports status and
	// leaves the Corefile, Service and DaemonSet alone (for hand edits
	// during an incident).
	// +optional
	// +kubebuilder:validation:Enum=Managed;Unmanaged
	// +kubebuilder:default=Managed
	ManagementState ManagementState `json:"managementState,omitempty"`
}

// PluginConfig configures CoreDNS plugins.
type PluginConfig struct {
	// ForwardPlugins send the queries for a domain and its subdomains to
	// other nameservers. A query goes to the forward plugin with the
	// longest domain that is a suffix of its name (www.a.foo.com goes to
	// a.foo.com rather than foo.com); names in no forwarded domain go to
	// the upstream resolvers. Domains must be unique. At most 150: the
	// most whose status (the health of every nameserver) still fits in
	// the object etcd stores.
	// +optional
	// +kubebuilder:validation:MaxItems=150
	// +listType=atomic
	ForwardPlugins []ForwardPlugin `json:"forwardPlugins,omitempty"`
}

// ForwardPolicy selects how a forward plugin picks a nameserver.
type ForwardPolicy string

// The policies are those of CoreDNS's forward plugin (policy random,
// round_robin, sequential), spelled as in the OpenShift DNS operator API.
const (
	// ForwardPolicyRandom picks a nameserver at random for each query.
	ForwardPolicyRandom ForwardPolicy = "Random"
	// ForwardPolicyRoundRobin takes the nameservers in turn, one per query.
	ForwardPolicyRoundRobin ForwardPolicy = "RoundRobin"
	// ForwardPolicySequential always tries the nameservers in the order
	// listed, moving on to the next only when one fails.
	ForwardPolicySequential ForwardPolicy = "Sequential"
)

// ForwardPlugin forwards one domain to up to 15 nameservers.
type ForwardPlugin struct {
	// Domain is the DNS domain forwarded, with its subdomains: a lower-case
	// RFC 1123 subdomain such as "example.com". It may not be "." (use
	// upstreamResolvers), the cluster domain, a subdomain or a parent
	// domain of it, or the domain of another forward plugin.
	Domain string `json:"domain"`

	// NameServers are the nameservers the domain is forwarded to, 1 to 15,
	// each an IP address with an optional port (53 by default, 853 over
	// TLS): "192.0.2.1", "192.0.2.1:5353", "2001:db8::1" or
	// "[2001:db8::1]:5353". A nameserver may be listed once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=15
	// +listType=atomic
	NameServers []string `json:"nameServers"`

	// Policy is the order in which the nameservers are tried. Queries go to
	// healthy nameservers; a nameserver that fails is health-checked
	// until it answers again.
	// +optional
	// +kubebuilder:validation:Enum=Random;RoundRobin;Sequential
	// +kubebuilder:default=Random
	Policy ForwardPolicy `json:"policy,omitempty"`

	// TransportConfig selects how queries reach the nameservers: in
	// cleartext (the default), or over TLS.
	// +optional
	TransportConfig *DNSTransportConfig `json:"transportConfig,omitempty"`

	// ProtocolStrategy TCP sends every query to the nameservers over TCP,
	// for nameservers that send UDP answers larger than 512 bytes without
	// setting the truncated flag. Empty sends queries over UDP and retries
	// a truncated answer over TCP.
	// +optional
	// +kubebuilder:validation:Enum=TCP;""
	ProtocolStrategy ProtocolStrategy `json:"protocolStrategy,omitempty"`
}

// UpstreamResolvers are the resolvers of the "." zone.
type UpstreamResolvers struct {
	// Upstreams are the resolvers, 1 to 15: the node's /etc/resolv.conf
	// (type SystemResolvConf) and resolvers at an address (type Network).
	// Each may be listed once. Defaults to one SystemResolvConf.
	// +optional
	// +kubebuilder:validation:MaxItems=15
	// +kubebuilder:default={{type: SystemResolvConf}}
	// +listType=atomic
	Upstreams []Upstream `json:"upstreams,omitempty"`

	// Policy is the order in which the upstreams are tried. Sequential by
	// default, so that the resolv.conf order is kept, as resolvers
	// listed there expect.
	// +optional
	// +kubebuilder:validation:Enum=Random;RoundRobin;Sequential
	// +kubebuilder:default=Sequential
	Policy ForwardPolicy `json:"policy,omitempty"`

	// TransportConfig selects how queries reach the upstreams: in
	// cleartext (the default), or over TLS. TLS needs Network upstreams.
	// +optional
	TransportConfig *DNSTransportConfig `json:"transportConfig,omitempty"`

	// ProtocolStrategy TCP sends every query to the upstreams over TCP.
	// Empty sends queries over UDP and retries a truncated answer over TCP.
	// +optional
	// +kubebuilder:validation:Enum=TCP;""
	ProtocolStrategy ProtocolStrategy `json:"protocolStrategy,omitempty"`
}

// UpstreamType is the kind of an upstream resolver.
type UpstreamType string

const (
	// SystemResolvConfType is the nameservers of /etc/resolv.conf on the
	// node the cluster DNS pod runs on.
	SystemResolvConfType UpstreamType = "SystemResolvConf"
	// NetworkResolverType is a resolver at an IP address and port.
	NetworkResolverType UpstreamType = "Network"
)

// Upstream is one upstream resolver.
type Upstream struct {
	// Type is SystemResolvConf for the node's /etc/resolv.conf, or Network
	// for the resolver at address and port.
	// +kubebuilder:validation:Enum=SystemResolvConf;Network
	Type UpstreamType `json:"type"`

	// Address is the IPv4 or IPv6 address of a Network upstream; required
	// for Network, not allowed for SystemResolvConf.
	// +optional
	Address string `json:"address,omitempty"`

	// Port of a Network upstream, 1 to 65535; unset means 53, or 853 when
	// the transport is TLS. Not allowed for SystemResolvConf.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// DNSTransport is how queries reach a nameserver.
type DNSTransport string

const (
	// CleartextTransport is plain DNS over UDP and TCP.
	CleartextTransport DNSTransport = "Cleartext"
	// TLSTransport is DNS over TLS (RFC 7858).
	TLSTransport DNSTransport = "TLS"
)

// DNSTransportConfig selects the transport to nameservers.
type DNSTransportConfig struct {
	// Transport is Cleartext or TLS; empty means Cleartext.
	// +optional
	// +kubebuilder:validation:Enum=Cleartext;TLS;""
	Transport DNSTransport `json:"transport,omitempty"`

	// TLS configures DNS over TLS; required when transport is TLS and not
	// allowed otherwise.
	// +optional
	TLS *DNSOverTLSConfig `json:"tls,omitempty"`
}

// DNSOverTLSConfig configures DNS over TLS to the nameservers.
type DNSOverTLSConfig struct {
	// ServerName is the name the nameservers' certificates must be valid
	// for (a DNS subdomain), also sent as the TLS server name.
	ServerName string `json:"serverName"`

	// CABundle names the ConfigMap, in the operator's namespace, whose key
	// "ca-bundle.crt" holds the PEM certificates that sign the nameservers'
	// certificates. Unset trusts the system's certificate authorities.
	// +optional
	CABundle *ConfigMapNameReference `json:"caBundle,omitempty"`
}

// ConfigMapNameReference names a ConfigMap in a namespace the referrer
// implies.
type ConfigMapNameReference struct {
	// Name of the ConfigMap.
	Name string `json:"name"`
}

// ProtocolStrategy is the protocol queries to nameservers use.
type ProtocolStrategy string

const (
	// ProtocolStrategyDefault sends queries over UDP and retries truncated
	// answers over TCP.
	ProtocolStrategyDefault ProtocolStrategy = ""
	// ProtocolStrategyTCP sends every query over TCP.
	ProtocolStrategyTCP ProtocolStrategy = "TCP"
)

// DNSCache configures the cache of answers from forwarders and upstream
// resolvers. Durations are Go durations ("30s", "1h10m"); fractions of a
// second are dropped.
type DNSCache struct {
	// PositiveTTL is the longest time a successful answer is cached; at
	// least 1s. Defaults to 30s.
	// +optional
	PositiveTTL *metav1.Duration `json:"positiveTTL,omitempty"`

	// NegativeTTL is the longest time a negative answer (NXDOMAIN, NODATA)
	// is cached; at least 1s. Defaults to 30s.
	// +optional
	NegativeTTL *metav1.Duration `json:"negativeTTL,omitempty"`
}

// DNSLogLevel selects what the cluster DNS logs.
type DNSLogLevel string

const (
	// DNSLogLevelNormal logs queries answered with an error (SERVFAIL,
	// REFUSED, …).
	DNSLogLevelNormal DNSLogLevel = "Normal"
	// DNSLogLevelDebug also logs NXDOMAIN and NODATA answers.
	DNSLogLevelDebug DNSLogLevel = "Debug"
	// DNSLogLevelTrace logs every query.
	DNSLogLevelTrace DNSLogLevel = "Trace"
)

// ManagementState says whether the operator manages the cluster DNS.
type ManagementState string

const (
	// Managed means the operator reconciles the cluster DNS from the spec.
	Managed ManagementState = "Managed"
	// Unmanaged means the operator reports status and changes nothing.
	Unmanaged ManagementState = "Unmanaged"
)

// DNSStatus is the observed state of the cluster DNS.
type DNSStatus struct {
	// ClusterIP is the cluster IP of the cluster DNS Service, the
	// nameserver pods are given in their resolv.conf.
	// +optional
	ClusterIP string `json:"clusterIP,omitempty"`

	// ClusterDomain is the cluster domain the cluster DNS serves, such as
	// "cluster.local".
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`

	// ObservedGeneration is the metadata.generation of the spec the status
	// describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the latest observations of the cluster DNS: Available,
	// Progressing, Degraded and UpstreamsAvailable. Degraded names the
	// parts of the spec the operator left out of the Corefile because they
	// are invalid; UpstreamsAvailable the nameservers failing health
	// checks.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Upstreams is the health of every nameserver the cluster DNS forwards
	// to, forward plugins and upstream resolvers alike, as CoreDNS's
	// forward health checks see it.
	// +optional
	// +listType=atomic
	Upstreams []UpstreamStatus `json:"upstreams,omitempty"`
}

// The condition types of DNSStatus.Conditions.
const (
	// DNSAvailable is True when the cluster DNS answers: its Service has a
	// cluster IP and pods are ready.
	DNSAvailable = "Available"
	// DNSProgressing is True while a new configuration rolls out.
	DNSProgressing = "Progressing"
	// DNSDegraded is True when the cluster DNS runs without part of its
	// configuration: an invalid forward plugin left out, pods unavailable.
	DNSDegraded = "Degraded"
	// DNSUpstreamsAvailable is False, with reason UpstreamUnhealthy, while
	// a nameserver the cluster DNS forwards to fails CoreDNS's forward
	// health checks; status.upstreams names each. It is a condition of its
	// own so that one dead nameserver (the forward plugin sends the
	// queries to the others) does not make the whole cluster DNS
	// Degraded. Set only when the operator reads the cluster DNS's
	// metrics.
	DNSUpstreamsAvailable = "UpstreamsAvailable"
)

// UpstreamStatus is the health of one nameserver the cluster DNS forwards
// to.
type UpstreamStatus struct {
	// Domain is the forwarded domain the nameserver serves, or "." for the
	// upstream resolvers.
	Domain string `json:"domain"`

	// Address is the nameserver's IP:PORT ([IPv6]:PORT), as CoreDNS names
	// it in its metrics; the nameservers of a SystemResolvConf upstream
	// appear one by one.
	Address string `json:"address"`

	// Healthy is false while the nameserver fails CoreDNS's health checks.
	Healthy bool `json:"healthy"`

	// LastChecked is when the operator found the nameserver in its
	// current state (healthy or not): it is updated on a change only, not
	// at every read of the metrics, so that an unchanged health writes
	// nothing.
	// +optional
	LastChecked metav1.Time `json:"lastChecked,omitempty"`

	// Message says why the nameserver is unhealthy (the failed health
	// checks counted when it was found unhealthy, and since when); empty
	// when it is healthy.
	// +optional
	Message string `json:"message,omitempty"`
}
