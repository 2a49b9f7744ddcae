package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DNS configures cluster DNS.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DNS struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DNSSpec   `json:"spec,omitempty"`
	Status            DNSStatus `json:"status,omitempty"`
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
	PluginConfig PluginConfig `json:"pluginConfig,omitempty"`
}

// PluginConfig configures CoreDNS plugins.
type PluginConfig struct {
	// ForwardPlugins send queries for a domain to other nameservers.
	ForwardPlugins []ForwardPlugin `json:"forwardPlugins,omitempty"`
}

// ForwardPolicy selects how a forward plugin picks an upstream.
type ForwardPolicy string

// The policies are those of CoreDNS's forward plugin (policy random,
// round_robin, sequential), spelled as in the OpenShift DNS operator API.
const (
	// ForwardPolicyRandom picks an upstream at random for each query.
	ForwardPolicyRandom ForwardPolicy = "Random"
	// ForwardPolicyRoundRobin takes the upstreams in turn, one per query.
	ForwardPolicyRoundRobin ForwardPolicy = "RoundRobin"
	// ForwardPolicySequential always tries the upstreams in the order listed,
	// moving on to the next only when one fails.
	ForwardPolicySequential ForwardPolicy = "Sequential"
)

// ForwardPlugin forwards one domain to up to 15 nameservers.
type ForwardPlugin struct {
	Domain      string        `json:"domain"`
	NameServers []string      `json:"nameServers"`
	Policy      ForwardPolicy `json:"policy,omitempty"`
}

// DNSStatus is the observed state of cluster DNS.
type DNSStatus struct {
	ClusterIP     string             `json:"clusterIP,omitempty"`
	ClusterDomain string             `json:"clusterDomain,omitempty"`
	Conditions    []metav1.Condition `json:"conditions,omitempty"`
}
