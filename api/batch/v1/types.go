package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// JobSpec is the specification of a Job: upstream's batch/v1 JobSpec, whose
// fields it embeds, with dnsplane's pod template.
type JobSpec struct {
	batchv1.JobSpec `json:",inline"`
	// Template describes the pods the Job runs; its spec may carry
	// dnsParams. template.spec.restartPolicy may only be Never or OnFailure.
	Template corev1.PodTemplateSpec `json:"template"`
}

// Job runs pods until a number of them complete: upstream's batch/v1 Job
// with dnsplane's pod template.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Job struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the Job.
	Spec JobSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the Job, written
	// through the status subresource.
	Status batchv1.JobStatus `json:"status,omitempty"`
}

// JobList is a list of Jobs.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type JobList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Jobs.
	Items []Job `json:"items"`
}

// JobTemplateSpec describes the Jobs a CronJob creates: upstream's batch/v1
// JobTemplateSpec with dnsplane's JobSpec.
type JobTemplateSpec struct {
	// Standard object metadata of the Jobs created from the template.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the Jobs, with dnsplane's pod
	// template.
	Spec JobSpec `json:"spec,omitempty"`
}

// CronJobSpec is the specification of a CronJob: upstream's batch/v1
// CronJobSpec, whose fields it embeds, with dnsplane's job template.
type CronJobSpec struct {
	batchv1.CronJobSpec `json:",inline"`
	// JobTemplate describes the Job created at each scheduled time; its pod
	// template's spec may carry dnsParams.
	JobTemplate JobTemplateSpec `json:"jobTemplate"`
}

// CronJob creates Jobs on a repeating schedule: upstream's batch/v1 CronJob
// with dnsplane's job template.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CronJob struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired behavior of the CronJob, including its schedule.
	Spec CronJobSpec `json:"spec,omitempty"`
	// Status is the most recently observed status of the CronJob, written
	// through the status subresource.
	Status batchv1.CronJobStatus `json:"status,omitempty"`
}

// CronJobList is a list of CronJobs.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CronJobs.
	Items []CronJob `json:"items"`
}
