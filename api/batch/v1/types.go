// Package v1 holds dnsplane's batch/v1 types: the upstream k8s.io/api/batch/v1
// types whose pod template is dnsplane's, so the template may carry
// spec.dnsParams. See package api/core/v1 for how shadowing works.
package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// JobSpec shadows the upstream template with ours.
type JobSpec struct {
	batchv1.JobSpec `json:",inline"`
	Template        corev1.PodTemplateSpec `json:"template"`
}

// Job is a batch/v1 Job.
type Job struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              JobSpec           `json:"spec,omitempty"`
	Status            batchv1.JobStatus `json:"status,omitempty"`
}

// JobTemplateSpec is the upstream JobTemplateSpec with our JobSpec.
type JobTemplateSpec struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              JobSpec `json:"spec,omitempty"`
}

// CronJobSpec shadows the upstream job template with ours.
type CronJobSpec struct {
	batchv1.CronJobSpec `json:",inline"`
	JobTemplate         JobTemplateSpec `json:"jobTemplate"`
}

// CronJob is a batch/v1 CronJob.
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CronJobSpec           `json:"spec,omitempty"`
	Status            batchv1.CronJobStatus `json:"status,omitempty"`
}
