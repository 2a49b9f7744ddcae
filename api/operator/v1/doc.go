// +k8s:deepcopy-gen=package
// +groupName=operator.dnsplane.io

// Package v1 holds the operator.dnsplane.io/v1 API: the cluster-scoped DNS
// resource (singleton "default") that the DNS operator turns into a CoreDNS
// Corefile.
//
// The contract is the forwarding API of the OpenShift enhancement
// "Configurable DNS Plugins" (docs/dns-operator.md): spec.pluginConfig.forwardPlugins,
// each a domain, up to 15 nameservers and a policy. The other spec fields
// are what the OpenShift DNS operator found it needed later (upstream
// resolvers for ".", DNS-over-TLS, forcing TCP, cache TTLs, log level,
// management state); docs/dns-operator.md describes every field, its
// default and its rules.
//
// Markers in the comments (+optional, +kubebuilder:validation:Enum,
// +kubebuilder:default) state the schema for the generators; the rules
// themselves are enforced by the DNS strategy (internal/registry/operator/dns),
// which also applies the defaults.
package v1
