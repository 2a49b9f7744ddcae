// Package v1 holds dnsplane's apps/v1 workload types: the upstream
// k8s.io/api/apps/v1 types whose pod template is dnsplane's, so the template
// may carry spec.dnsParams. See package api/core/v1 for how shadowing works.
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
type Deployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DeploymentSpec          `json:"spec,omitempty"`
	Status            appsv1.DeploymentStatus `json:"status,omitempty"`
}

// ReplicaSetSpec shadows the upstream template with ours.
type ReplicaSetSpec struct {
	appsv1.ReplicaSetSpec `json:",inline"`
	Template              corev1.PodTemplateSpec `json:"template,omitempty"`
}

// ReplicaSet is an apps/v1 ReplicaSet.
type ReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ReplicaSetSpec          `json:"spec,omitempty"`
	Status            appsv1.ReplicaSetStatus `json:"status,omitempty"`
}

// StatefulSetSpec shadows the upstream template with ours.
type StatefulSetSpec struct {
	appsv1.StatefulSetSpec `json:",inline"`
	Template               corev1.PodTemplateSpec `json:"template"`
}

// StatefulSet is an apps/v1 StatefulSet.
type StatefulSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              StatefulSetSpec          `json:"spec,omitempty"`
	Status            appsv1.StatefulSetStatus `json:"status,omitempty"`
}

// DaemonSetSpec shadows the upstream template with ours.
type DaemonSetSpec struct {
	appsv1.DaemonSetSpec `json:",inline"`
	Template             corev1.PodTemplateSpec `json:"template"`
}

// DaemonSet is an apps/v1 DaemonSet.
type DaemonSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DaemonSetSpec          `json:"spec,omitempty"`
	Status            appsv1.DaemonSetStatus `json:"status,omitempty"`
}
