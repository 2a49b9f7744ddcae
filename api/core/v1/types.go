package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DNS policies added by dnsplane. The four upstream values are
// corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst,
// corev1.DNSDefault and corev1.DNSNone.
const (
	// DNSCustom builds the pod's search list and options from
	// spec.dnsParams.custom (docs/pod-dns.md, "dnsPolicy: Custom"). Nameservers are the cluster DNS.
	DNSCustom corev1.DNSPolicy = "Custom"
	// DNSClusterFirstWithAutopath gives the pod the single search path
	// search.<namespace>.<cluster-domain>.ap.k8s.io; the node cache and the
	// cluster DNS expand it server side (docs/autopath.md).
	DNSClusterFirstWithAutopath corev1.DNSPolicy = "ClusterFirstWithAutopath"
)

// DNSPolicies returns every policy dnsplane knows, in the order error
// messages list them.
func DNSPolicies() []corev1.DNSPolicy {
	return []corev1.DNSPolicy{
		corev1.DNSClusterFirstWithHostNet,
		corev1.DNSClusterFirst,
		corev1.DNSDefault,
		corev1.DNSNone,
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

// PodDNSParams holds policy-specific DNS parameters. Only valid with
// dnsPolicy Custom.
type PodDNSParams struct {
	// Custom is required when dnsPolicy is Custom.
	Custom *PodDNSParamsCustom `json:"custom,omitempty"`
}

// PodDNSParamsCustom describes the search line and options of a Custom pod.
type PodDNSParamsCustom struct {
	// Search entries, in order. Labels may be $(NAMESPACE) or $(CLUSTER);
	// the last entry may be $(HOST), the node's search list.
	Search []string `json:"search,omitempty"`
	// Options are copied unmodified to the options line (e.g. "ndots:2").
	Options []string `json:"options,omitempty"`
}

// PodSpec is the upstream PodSpec plus spec.dnsParams.
type PodSpec struct {
	corev1.PodSpec `json:",inline"`
	// DNSParams is only valid with dnsPolicy Custom.
	DNSParams *PodDNSParams `json:"dnsParams,omitempty"`
}

// Pod is a core/v1 Pod whose spec may carry dnsParams.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Pod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodSpec          `json:"spec,omitempty"`
	Status            corev1.PodStatus `json:"status,omitempty"`
}

// PodList is a list of Pods, as a list request returns them.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pod `json:"items"`
}

// PodTemplateSpec is the upstream PodTemplateSpec with our PodSpec.
type PodTemplateSpec struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodSpec `json:"spec,omitempty"`
}

// PodTemplate is a core/v1 PodTemplate.
//
// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PodTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Template          PodTemplateSpec `json:"template,omitempty"`
}

// PodTemplateList is a list of PodTemplates.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PodTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodTemplate `json:"items"`
}

// ReplicationControllerSpec shadows the upstream template with ours.
type ReplicationControllerSpec struct {
	corev1.ReplicationControllerSpec `json:",inline"`
	Template                         *PodTemplateSpec `json:"template,omitempty"`
}

// ReplicationController is a core/v1 ReplicationController.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicationController struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ReplicationControllerSpec          `json:"spec,omitempty"`
	Status            corev1.ReplicationControllerStatus `json:"status,omitempty"`
}

// ReplicationControllerList is a list of ReplicationControllers.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicationControllerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ReplicationController `json:"items"`
}
