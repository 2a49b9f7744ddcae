// Package job is the strategy of batch/v1 Jobs: a pod template carrier
// (internal/registry/workload) validated as upstream's jobStrategy does
// (pkg/registry/batch/job/strategy.go), whose selector the server generates
// unless the Job asks for a manual one.
package job

import (
	"context"

	genericrest "k8s.io/apiserver/pkg/registry/rest"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/batch"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	"k8s.io/kubernetes/pkg/features"

	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// Strategy is the Job strategy.
type Strategy struct{ workload.Strategy[batch.Job] }

var _ rest.Strategy = Strategy{}

// New returns the Job strategy with the pod DNS rules dns.
func New(dns validation.Options) Strategy {
	return Strategy{workload.Strategy[batch.Job]{
		Strategy: upstream.Strategy[batch.Job]{
			Default: rest.Default{Status: true, Namespaced: true, GarbageCollection: genericrest.OrphanDependents},
			Rules: upstream.Rules[batch.Job]{
				Validate: func(j *batch.Job) field.ErrorList {
					return batchvalidation.ValidateJobCreate(j, options(j, nil))
				},
				ValidateUpdate: func(j, old *batch.Job) field.ErrorList {
					return batchvalidation.ValidateJobUpdate(j, old, options(j, old))
				},
				// The status transition checks upstream enables per changed
				// field (getStatusValidationOptions, unexported) are left
				// off: dnsplane runs no Job controller, so Job status comes
				// only from clients that run Jobs themselves.
				ValidateStatusUpdate: func(j, old *batch.Job) field.ErrorList {
					return batchvalidation.ValidateJobUpdateStatus(j, old, batchvalidation.JobStatusValidationOptions{})
				},
				DeclarativeOptions: func() map[string]bool {
					return map[string]bool{string(features.WorkloadWithJob): utilfeature.DefaultFeatureGate.Enabled(features.WorkloadWithJob)}
				},
			},
			View: view,
		},
		DNS: dns,
	}}
}

// options are the JobValidationOptions upstream's jobStrategy computes
// (validationOptionsForJob): on update, what the stored Job allows (a
// selector it already has, a pod template that may change while the Job is
// suspended and has not started, the generated labels it may predate).
func options(j, old *batch.Job) batchvalidation.JobValidationOptions {
	if old == nil {
		return batchvalidation.JobValidationOptions{
			PodValidationOptions:  podutil.GetValidationOptionsFromPodTemplate(&j.Spec.Template, nil),
			RequirePrefixedLabels: true,
		}
	}
	opts := batchvalidation.JobValidationOptions{
		PodValidationOptions: podutil.GetValidationOptionsFromPodTemplate(&j.Spec.Template, &old.Spec.Template),
	}
	opts.AllowInvalidLabelValueInSelector = opts.AllowInvalidLabelValueInSelector || metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
	suspended := old.Spec.Suspend != nil && *old.Spec.Suspend
	opts.AllowMutableSchedulingDirectives = suspended && old.Status.StartTime == nil
	mutableTemplate := suspended && (old.Status.StartTime == nil || batchvalidation.IsConditionTrue(old.Status.Conditions, batch.JobSuspended)) && old.Status.Active == 0
	if utilfeature.DefaultFeatureGate.Enabled(features.MutablePodResourcesForSuspendedJobs) {
		opts.AllowMutablePodResources = mutableTemplate
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.MutableSchedulingDirectivesForSuspendedJobs) {
		opts.AllowMutableSchedulingDirectives = mutableTemplate
	}
	_, hadJobName := old.Spec.Template.Labels[batch.JobNameLabel]
	_, hadControllerUID := old.Spec.Template.Labels[batch.ControllerUidLabel]
	opts.RequirePrefixedLabels = hadJobName && hadControllerUID
	return opts
}

// view is the k8s.io/api Job sharing j's metadata, spec (the template's
// dnsParams aside) and status.
func view(obj any) (runtime.Object, func()) {
	j := obj.(*dpbatchv1.Job)
	v := &batchv1.Job{ObjectMeta: j.ObjectMeta, Spec: SpecView(&j.Spec), Status: j.Status}
	return v, func() {
		j.ObjectMeta, j.Status = v.ObjectMeta, v.Status
		SetSpec(&j.Spec, v.Spec)
	}
}

// SpecView is the k8s.io/api JobSpec sharing s (the template's dnsParams
// aside); CronJob's job template uses it too.
func SpecView(s *dpbatchv1.JobSpec) batchv1.JobSpec {
	v := s.JobSpec
	v.Template = workload.TemplateView(&s.Template)
	return v
}

// SetSpec copies v, a defaulted SpecView, back into s.
func SetSpec(s *dpbatchv1.JobSpec, v batchv1.JobSpec) {
	workload.SetTemplate(&s.Template, v.Template)
	s.JobSpec = v
	s.JobSpec.Template = corev1.PodTemplateSpec{} // shadowed by s.Template
}

// PrepareForCreate clears the status, defaults the Job and, unless it asks
// for a manual selector, generates its selector from its uid and labels its
// pod template to match, as kube-apiserver does.
//
// Upstream's generateSelector (pkg/registry/batch/job/strategy.go) is
// unexported, and that package cannot be linked for it: it brings the
// generic registry, storage, CEL and every client-go informer (a probe
// binary grew from 26 to 71 MB). So the same labels are set here, with
// upstream's label names; validateGeneratedSelector (ValidateJobCreate)
// then checks them as it checks kube-apiserver's.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	j := obj.(*dpbatchv1.Job)
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{batch.LegacyJobNameLabel, batch.JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.Name
		}
	}
	for _, k := range []string{batch.LegacyControllerUidLabel, batch.ControllerUidLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batch.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batch.ControllerUidLabel] = string(j.UID)
	}
}
