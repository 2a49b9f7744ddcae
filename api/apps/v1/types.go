package v1

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// DeploymentSpec shadows the upstream template with ours.
type DeploymentSpec struct {
	appsv1.DeploymentSpec `json:",inline"`
	Template              corev1.PodTemplateSpec `json:"template"`
}

// Deployment is an apps/v1 Deployment.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Deployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DeploymentSpec          `json:"spec,omitempty"`
	Status            appsv1.DeploymentStatus `json:"status,omitempty"`
}

// DeploymentList is a list of Deployments.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Deployment `json:"items"`
}

// ReplicaSetSpec shadows the upstream template with ours.
type ReplicaSetSpec struct {
	appsv1.ReplicaSetSpec `json:",inline"`
	Template              corev1.PodTemplateSpec `json:"template,omitempty"`
}

// ReplicaSet is an apps/v1 ReplicaSet.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ReplicaSetSpec          `json:"spec,omitempty"`
	Status            appsv1.ReplicaSetStatus `json:"status,omitempty"`
}

// ReplicaSetList is a list of ReplicaSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ReplicaSet `json:"items"`
}

// StatefulSetSpec shadows the upstream template with ours.
type StatefulSetSpec struct {
	appsv1.StatefulSetSpec `json:",inline"`
	Template               corev1.PodTemplateSpec `json:"template"`
}

// StatefulSet is an apps/v1 StatefulSet.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StatefulSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              StatefulSetSpec          `json:"spec,omitempty"`
	Status            appsv1.StatefulSetStatus `json:"status,omitempty"`
}

// StatefulSetList is a list of StatefulSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type StatefulSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StatefulSet `json:"items"`
}

// DaemonSetSpec shadows the upstream template with ours.
type DaemonSetSpec struct {
	appsv1.DaemonSetSpec `json:",inline"`
	Template             corev1.PodTemplateSpec `json:"template"`
}

// DaemonSet is an apps/v1 DaemonSet.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DaemonSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DaemonSetSpec          `json:"spec,omitempty"`
	Status            appsv1.DaemonSetStatus `json:"status,omitempty"`
}

// DaemonSetList is a list of DaemonSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DaemonSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DaemonSet `json:"items"`
}
