package controllers

// disabledDescriptors are kube-controller-manager's default controllers
// that dnsplane does not run, each with the reason: they need what a
// dnsplane node has not got (volumes, a metrics API, a container
// runtime, DRA drivers), or their job is done differently here.
func disabledDescriptors() []Descriptor {
	const volumes = "dnsplane nodes mount no volumes and run no CSI or in-tree volume plugins: a PersistentVolumeClaim stays Pending"
	return []Descriptor{
		{Name: "persistentvolume-binder-controller", Disabled: volumes},
		{Name: "persistentvolume-attach-detach-controller", Disabled: volumes},
		{Name: "persistentvolume-expander-controller", Disabled: volumes},
		{Name: "ephemeral-volume-controller", Disabled: volumes + "; it would create claims for pods' ephemeral volumes that nothing provisions"},
		{Name: "volumeattributesclass-protection-controller", Disabled: volumes},
		{Name: "horizontal-pod-autoscaler-controller", Disabled: "there is no metrics API (metrics.k8s.io): no container runs, so there is no usage to scale on"},
		{Name: "node-ipam-controller", Disabled: "each node agent takes its pod CIDR from --pod-cidr (docs/agent.md), as kube-controller-manager leaves it off without --allocate-node-cidrs"},
		{Name: "service-cidr-controller", Disabled: "the API server allocates Service IPs from --service-cluster-ip-range itself (docs/apiserver.md), not from ServiceCIDR and IPAddress objects"},
		{Name: "serviceaccount-token-controller", Disabled: "legacy token Secrets: pods and kubectl create token get bound tokens from serviceaccounts/token (docs/apiserver.md)"},
		{Name: "resourceclaim-controller", Disabled: "no DRA driver publishes devices on a dnsplane node, so no claim could be allocated"},
		{Name: "device-taint-eviction-controller", Disabled: "no DRA driver publishes devices on a dnsplane node"},
		{Name: "validatingadmissionpolicy-status-controller", Disabled: "ValidatingAdmissionPolicies are stored and validated but not enforced (docs/apiserver.md)"},
		{Name: "storage-version-migrator-controller", Disabled: "the API server rewrites objects on read in the stored version it serves; StorageVersionMigrations are stored only (docs/apiserver.md)"},
	}
}
