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
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Job struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              JobSpec           `json:"spec,omitempty"`
	Status            batchv1.JobStatus `json:"status,omitempty"`
}

// JobList is a list of Jobs.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type JobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Job `json:"items"`
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
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CronJobSpec           `json:"spec,omitempty"`
	Status            batchv1.CronJobStatus `json:"status,omitempty"`
}

// CronJobList is a list of CronJobs.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronJob `json:"items"`
}
