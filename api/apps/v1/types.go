package v1

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// DeploymentSpec is the specification of a Deployment: upstream's apps/v1
// DeploymentSpec, whose fields it embeds, with dnsplane's pod template.
type DeploymentSpec struct {
	appsv1.DeploymentSpec `json:",inline"`
	// Template describes the pods the Deployment creates; its spec may carry
	// dnsParams. template.spec.restartPolicy may only be Always.
	Template corev1.PodTemplateSpec `json:"template"`
}

// Deployment declares the pods and replica sets of an application and how
// they are updated: upstream's apps/v1 Deployment with dnsplane's pod
// template.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Deployment struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the Deployment.
	Spec DeploymentSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the Deployment, written
	// through the status subresource.
	Status appsv1.DeploymentStatus `json:"status,omitempty"`
}

// DeploymentList is a list of Deployments.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Deployments.
	Items []Deployment `json:"items"`
}

// ReplicaSetSpec is the specification of a ReplicaSet: upstream's apps/v1
// ReplicaSetSpec, whose fields it embeds, with dnsplane's pod template.
type ReplicaSetSpec struct {
	appsv1.ReplicaSetSpec `json:",inline"`
	// Template describes the pods created when there are fewer than
	// replicas; its spec may carry dnsParams.
	Template corev1.PodTemplateSpec `json:"template,omitempty"`
}

// ReplicaSet keeps a number of copies of a pod running: upstream's apps/v1
// ReplicaSet with dnsplane's pod template.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicaSet struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the ReplicaSet.
	Spec ReplicaSetSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the ReplicaSet, written
	// through the status subresource.
	Status appsv1.ReplicaSetStatus `json:"status,omitempty"`
}

// ReplicaSetList is a list of ReplicaSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ReplicaSets.
	Items []ReplicaSet `json:"items"`
}

// StatefulSetSpec is the specification of a StatefulSet: upstream's apps/v1
// StatefulSetSpec, whose fields it embeds, with dnsplane's pod template.
type StatefulSetSpec struct {
	appsv1.StatefulSetSpec `json:",inline"`
	// Template describes the pods of the StatefulSet, each with its own
	// identity and named <statefulset-name>-<ordinal>; its spec may carry
	// dnsParams. template.spec.restartPolicy may only be Always.
	Template corev1.PodTemplateSpec `json:"template"`
}

// StatefulSet runs pods with stable names and storage: upstream's apps/v1
// StatefulSet with dnsplane's pod template.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StatefulSet struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the StatefulSet.
	Spec StatefulSetSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the StatefulSet,
	// written through the status subresource.
	Status appsv1.StatefulSetStatus `json:"status,omitempty"`
}

// StatefulSetList is a list of StatefulSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StatefulSetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the StatefulSets.
	Items []StatefulSet `json:"items"`
}

// DaemonSetSpec is the specification of a DaemonSet: upstream's apps/v1
// DaemonSetSpec, whose fields it embeds, with dnsplane's pod template.
type DaemonSetSpec struct {
	appsv1.DaemonSetSpec `json:",inline"`
	// Template describes the pod run on every node the template's node
	// selector matches (every node without one); its spec may carry
	// dnsParams. template.spec.restartPolicy may only be Always.
	Template corev1.PodTemplateSpec `json:"template"`
}

// DaemonSet runs a copy of a pod on each node: upstream's apps/v1 DaemonSet
// with dnsplane's pod template.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DaemonSet struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the DaemonSet.
	Spec DaemonSetSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the DaemonSet, written
	// through the status subresource.
	Status appsv1.DaemonSetStatus `json:"status,omitempty"`
}

// DaemonSetList is a list of DaemonSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DaemonSetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DaemonSets.
	Items []DaemonSet `json:"items"`
}
