// +k8s:deepcopy-gen=package
// +groupName=apps

// Package v1 holds dnsplane's apps/v1 workload types: the upstream
// k8s.io/api/apps/v1 types whose pod template is dnsplane's, so the template
// may carry spec.dnsParams. See package api/core/v1 for how shadowing works.
package v1
