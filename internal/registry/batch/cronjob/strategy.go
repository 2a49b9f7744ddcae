// Package cronjob is the strategy of batch/v1 CronJobs: a pod template
// carrier (internal/registry/workload) validated as upstream's
// cronJobStrategy does (pkg/registry/batch/cronjob/strategy.go).
package cronjob

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/batch"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	"k8s.io/kubernetes/pkg/features"

	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	"github.com/dnsplane/dnsplane/internal/registry/batch/job"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// New returns the CronJob strategy with the pod DNS rules dns.
func New(dns validation.Options) workload.Strategy[batch.CronJob] {
	return workload.Strategy[batch.CronJob]{
		Strategy: upstream.Strategy[batch.CronJob]{
			Default: rest.Default{Status: true, Namespaced: true, GarbageCollection: genericrest.DeleteDependents},
			Rules: upstream.Rules[batch.CronJob]{
				Validate: func(cj *batch.CronJob) field.ErrorList {
					return batchvalidation.ValidateCronJobCreate(cj, podutil.GetValidationOptionsFromPodTemplate(&cj.Spec.JobTemplate.Spec.Template, nil))
				},
				ValidateUpdate: func(cj, old *batch.CronJob) field.ErrorList {
					return batchvalidation.ValidateCronJobUpdate(cj, old, podutil.GetValidationOptionsFromPodTemplate(&cj.Spec.JobTemplate.Spec.Template, &old.Spec.JobTemplate.Spec.Template))
				},
				// Upstream's cronJobStatusStrategy accepts every status.
				ValidateStatusUpdate: func(*batch.CronJob, *batch.CronJob) field.ErrorList { return field.ErrorList{} },
				DeclarativeOptions: func() map[string]bool {
					return map[string]bool{string(features.WorkloadWithJob): utilfeature.DefaultFeatureGate.Enabled(features.WorkloadWithJob)}
				},
			},
			View: view,
		},
		DNS: dns,
	}
}

// view is the k8s.io/api CronJob sharing cj's metadata, spec (the job
// template's dnsParams aside) and status.
func view(obj any) (runtime.Object, func()) {
	cj := obj.(*dpbatchv1.CronJob)
	v := &batchv1.CronJob{ObjectMeta: cj.ObjectMeta, Spec: cj.Spec.CronJobSpec, Status: cj.Status}
	v.Spec.JobTemplate = batchv1.JobTemplateSpec{ObjectMeta: cj.Spec.JobTemplate.ObjectMeta, Spec: job.SpecView(&cj.Spec.JobTemplate.Spec)}
	return v, func() {
		cj.ObjectMeta, cj.Status = v.ObjectMeta, v.Status
		cj.Spec.JobTemplate.ObjectMeta = v.Spec.JobTemplate.ObjectMeta
		job.SetSpec(&cj.Spec.JobTemplate.Spec, v.Spec.JobTemplate.Spec)
		cj.Spec.CronJobSpec = v.Spec
		cj.Spec.CronJobSpec.JobTemplate = batchv1.JobTemplateSpec{} // shadowed by cj.Spec.JobTemplate
	}
}
