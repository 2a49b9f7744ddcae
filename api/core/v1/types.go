package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DNS policy for the pod: what its resolv.conf is made of. Defaults to
// "ClusterFirst". DNS parameters given in dnsConfig are merged into what the
// policy gives. Custom and ClusterFirstWithAutopath are dnsplane's, the others
// are upstream's (docs/pod-dns.md).
// ---
// The four upstream policies are redeclared here (same names and values as
// corev1.DNSClusterFirstWithHostNet, …) so that the six have one list and one
// comment each: hack/swaggerdoc turns the comment above the dashes and one
// line per constant into the description of spec.dnsPolicy that kubectl
// explain shows, in place of upstream's, which names four values. Values are
// literals because the generator reads them from the source;
// TestUpstreamDNSPolicies checks they are upstream's.
//
// +dnsplane:swaggerdoc:field=PodSpec.dnsPolicy
const (
	// DNSClusterFirstWithHostNet is ClusterFirst for every pod,
	// hostNetwork pods included.
	DNSClusterFirstWithHostNet corev1.DNSPolicy = "ClusterFirstWithHostNet"
	// DNSClusterFirst resolves through the cluster DNS and searches
	// <namespace>.svc.<cluster-domain>, svc.<cluster-domain> and
	// <cluster-domain>, then the node's search list, with ndots:5; a
	// hostNetwork pod gets Default instead.
	DNSClusterFirst corev1.DNSPolicy = "ClusterFirst"
	// DNSDefault takes the nameservers, search list and options of the node
	// the pod runs on.
	DNSDefault corev1.DNSPolicy = "Default"
	// DNSNone gives no nameserver, search or option of its own: everything
	// comes from dnsConfig.
	DNSNone corev1.DNSPolicy = "None"
	// DNSCustom resolves through the cluster DNS with the search list and
	// options of dnsParams.custom, whose search entries may use $(NAMESPACE),
	// $(CLUSTER) and $(HOST) (docs/pod-dns.md, "dnsPolicy: Custom").
	DNSCustom corev1.DNSPolicy = "Custom"
	// DNSClusterFirstWithAutopath gives the single search path
	// search.<namespace>.<cluster-domain>.ap.k8s.io, expanded by the node
	// cache and the cluster DNS on the server side: one query per lookup
	// instead of one per search path (docs/autopath.md).
	DNSClusterFirstWithAutopath corev1.DNSPolicy = "ClusterFirstWithAutopath"
)

// DNSPolicies returns every policy dnsplane knows, in the order error
// messages and the dnsPolicy description list them.
func DNSPolicies() []corev1.DNSPolicy {
	return []corev1.DNSPolicy{
		DNSClusterFirstWithHostNet,
		DNSClusterFirst,
		DNSDefault,
		DNSNone,
		DNSCustom,
		DNSClusterFirstWithAutopath,
	}
}

// Substitutions allowed in spec.dnsParams.custom.search. Each replaces a
// whole DNS label; $(HOST) is the whole entry and only the last one.
const (
	SubstitutionNamespace = "$(NAMESPACE)"
	SubstitutionCluster   = "$(CLUSTER)"
	SubstitutionHost      = "$(HOST)"
)

// Substitutions returns the valid substitutions in the order messages name
// them.
func Substitutions() []string {
	return []string{SubstitutionNamespace, SubstitutionCluster, SubstitutionHost}
}

// AutopathZone is the suffix that marks a query for server-side search
// expansion.
const AutopathZone = "ap.k8s.io"

// PodDNSParams holds the parameters of the DNS policies that take some.
// Only valid with dnsPolicy Custom.
type PodDNSParams struct {
	// Custom is the search list and options of dnsPolicy Custom; required
	// with that policy.
	Custom *PodDNSParamsCustom `json:"custom,omitempty"`
}

// PodDNSParamsCustom is the search list and the options of a pod with
// dnsPolicy Custom. Its nameserver is the cluster DNS; dnsConfig is merged
// on top as for every policy (docs/pod-dns.md, "dnsPolicy: Custom").
type PodDNSParamsCustom struct {
	// Search entries, in order: at most 32, and 2048 characters in all. A
	// whole DNS label may be $(NAMESPACE) (the pod's namespace) or
	// $(CLUSTER) (the cluster domain); the last entry may be $(HOST), the
	// node's search list. Example: $(NAMESPACE).svc.$(CLUSTER).
	Search []string `json:"search,omitempty"`
	// Options of the resolv.conf options line, copied unmodified (e.g.
	// "ndots:2"; ndots must be 0 to 15).
	Options []string `json:"options,omitempty"`
}

// PodSpec is the specification of a pod: upstream's core/v1 PodSpec, whose
// fields it embeds, plus dnsParams; dnsPolicy also takes dnsplane's Custom
// and ClusterFirstWithAutopath (docs/pod-dns.md).
type PodSpec struct {
	corev1.PodSpec `json:",inline"`
	// DNSParams are the parameters of the pod's DNS policy: only valid, and
	// required, with dnsPolicy Custom.
	DNSParams *PodDNSParams `json:"dnsParams,omitempty"`
}

// Pod is a group of containers run together on a node: upstream's core/v1
// Pod, whose spec may also carry dnsParams. dnsplane runs no containers; it
// stores pods and computes their DNS.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Pod struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata: name, namespace, labels, annotations and
	// what the server sets (uid, resourceVersion, creationTimestamp).
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the pod, with dnsplane's DNS fields.
	Spec PodSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the pod, written by
	// whatever runs it: dnsplane runs no kubelet, so it is what clients
	// write through the status subresource.
	Status corev1.PodStatus `json:"status,omitempty"`
}

// PodList is a list of Pods.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PodList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata: the resourceVersion of the list and the
	// continue token of a paged list.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Pods.
	Items []Pod `json:"items"`
}

// PodTemplateSpec describes the pods created from a template: upstream's
// core/v1 PodTemplateSpec with dnsplane's PodSpec.
type PodTemplateSpec struct {
	// Standard object metadata of the pods created from the template (their
	// labels and annotations).
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the pods, with dnsplane's DNS fields.
	Spec PodSpec `json:"spec,omitempty"`
}

// PodTemplate is a stored pod template to create pods from: upstream's
// core/v1 PodTemplate with dnsplane's PodTemplateSpec.
//
// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PodTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Template defines the pods created from this pod template; its spec may
	// carry dnsParams.
	Template PodTemplateSpec `json:"template,omitempty"`
}

// PodTemplateList is a list of PodTemplates.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PodTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodTemplates.
	Items []PodTemplate `json:"items"`
}

// ReplicationControllerSpec is the specification of a replication
// controller: upstream's core/v1 ReplicationControllerSpec, whose fields it
// embeds, with dnsplane's pod template.
type ReplicationControllerSpec struct {
	corev1.ReplicationControllerSpec `json:",inline"`
	// Template describes the pods created when there are fewer than
	// replicas; its spec may carry dnsParams. template.spec.restartPolicy
	// may only be Always.
	Template *PodTemplateSpec `json:"template,omitempty"`
}

// ReplicationController keeps a number of copies of a pod running:
// upstream's core/v1 ReplicationController with dnsplane's pod template.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicationController struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the replication controller.
	Spec ReplicationControllerSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the replication
	// controller, written through the status subresource.
	Status corev1.ReplicationControllerStatus `json:"status,omitempty"`
}

// ReplicationControllerList is a list of ReplicationControllers.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicationControllerList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ReplicationControllers.
	Items []ReplicationController `json:"items"`
}
