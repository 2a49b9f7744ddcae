// +k8s:deepcopy-gen=package
// +groupName=operator.dnsplane.io

// Package v1 holds the operator.dnsplane.io/v1 API: the cluster-scoped DNS
// resource (singleton "default") that the DNS operator turns into a CoreDNS
// Corefile. This first version carries the forwarding contract of the
// OpenShift enhancement "Configurable DNS Plugins" (openshift/enhancements,
// enhancements/dns/plugins.md): spec.pluginConfig.forwardPlugins. The
// operator completes it.
package v1
