// Package podsecurity is kube-apiserver's PodSecurity validating admission
// plugin (plugin/pkg/admission/security/podsecurity) for dnsplane's
// strategies: upstream's k8s.io/pod-security-admission library, its
// evaluator (policy.DefaultChecks()) and its admission logic, with kube's
// default AdmissionConfiguration (every mode privileged:latest when a
// namespace has no label, no exemptions). A namespace opts in with
// `pod-security.kubernetes.io/enforce` (and `-version`), `warn` and `audit`
// (https://kubernetes.io/docs/concepts/security/pod-security-admission/).
//
// As in kube, one Admission judges the three kinds of request the library
// knows (docs/apiserver.md, "Pod Security admission"):
//
//   - pods: an enforce violation is refused with kube's 403, warn
//     violations are Warning headers;
//   - pod template carriers (Deployment, ReplicaSet, StatefulSet, DaemonSet,
//     Job, CronJob, ReplicationController, PodTemplate): never refused, the
//     template is held to the namespace's warn level, which the library
//     raises to the enforce level when only enforce is labelled, so the
//     user hears of pods the controller will not be able to create;
//   - namespaces: labels that do not parse are refused (422), and a
//     stricter enforce level warns about the pods already there.
//
// It matters here because `dnsplane exec` runs a command as root only in a
// privileged container (docs/agent.md, "Who the command runs as").
package podsecurity

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/kubernetes/scheme"
	psadmission "k8s.io/pod-security-admission/admission"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"
)

// NamespaceGetter reads the namespace whose pod-security.kubernetes.io
// labels decide the level of what is admitted in it.
type NamespaceGetter = psadmission.NamespaceGetter

// PodLister lists a namespace's pods, for the warnings about existing pods
// when its enforce level becomes stricter.
type PodLister = psadmission.PodLister

// Admission is the PodSecurity plugin. Its methods are safe for concurrent
// use.
type Admission struct {
	admission *psadmission.Admission
}

// New builds the plugin reading namespaces from ns and listing pods from
// pods (nil: a namespace's label change finds no pods to warn about).
func New(ns NamespaceGetter, pods PodLister) (*Admission, error) {
	if ns == nil {
		return nil, errors.New("pod security: no namespace getter")
	}
	if pods == nil {
		pods = noPods{}
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("pod security evaluator: %w", err)
	}
	latest := psapi.LatestVersion().String()
	a := &psadmission.Admission{
		// kube-apiserver's default when no AdmissionConfiguration names
		// PodSecurity (plugin/pkg/admission/security/podsecurity).
		Configuration: &psconfig.PodSecurityConfiguration{Defaults: psconfig.PodSecurityDefaults{
			Enforce: string(psapi.LevelPrivileged), EnforceVersion: latest,
			Audit: string(psapi.LevelPrivileged), AuditVersion: latest,
			Warn: string(psapi.LevelPrivileged), WarnVersion: latest,
		}},
		Evaluator:        evaluator,
		Metrics:          noMetrics{},
		PodSpecExtractor: psadmission.DefaultPodSpecExtractor{},
		NamespaceGetter:  ns,
		PodLister:        pods,
	}
	if err := a.CompleteConfiguration(); err != nil {
		return nil, fmt.Errorf("pod security configuration: %w", err)
	}
	if err := a.ValidateConfiguration(); err != nil {
		return nil, fmt.Errorf("pod security configuration: %w", err)
	}
	return &Admission{admission: a}, nil
}

// kindOf is the resource and kind kube-apiserver's plugin gives the
// library for obj: its kind from client-go's scheme of the k8s.io/api
// types, and false unless it is a Namespace or a resource the library's
// own extractor finds a pod spec in.
func kindOf(obj runtime.Object) (schema.GroupVersionResource, schema.GroupVersionKind, bool) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionResource{}, schema.GroupVersionKind{}, false
	}
	resource, _ := meta.UnsafeGuessKindToResource(gvks[0])
	if resource.GroupResource() != corev1.Resource("namespaces") && !(psadmission.DefaultPodSpecExtractor{}).HasPodSpec(resource.GroupResource()) {
		return schema.GroupVersionResource{}, schema.GroupVersionKind{}, false
	}
	return resource, gvks[0], true
}

// Judges reports whether Validate judges obj: a Namespace or a kind the
// library finds a pod spec in.
func Judges(obj runtime.Object) bool {
	_, _, ok := kindOf(obj)
	return ok
}

// Validate judges a create (old nil) or an update of the main resource of
// obj, a k8s.io/api Pod, Namespace or pod template carrier, as kube's
// plugin does: the library's warnings go to the request's Warning headers
// and a refusal is the API status error kube-apiserver makes of the
// library's response (`pods "x" is forbidden: violates PodSecurity
// "baseline:latest": ...`). Any other type is a programming error.
func (a *Admission) Validate(ctx context.Context, obj, old runtime.Object) error {
	resource, kind, ok := kindOf(obj)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("pod security: cannot judge a %T", obj))
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("pod security: %w", err))
	}
	attrs := &psapi.AttributesRecord{
		Name:      m.GetName(),
		Namespace: m.GetNamespace(),
		Kind:      kind,
		Resource:  resource,
		Operation: admissionv1.Create,
		Object:    obj,
	}
	if resource.Resource == "namespaces" {
		// A namespace request's namespace is the namespace itself, as in
		// kube-apiserver's RequestInfo; it only matters to exemptions.
		attrs.Namespace = m.GetName()
	}
	if old != nil {
		attrs.Operation = admissionv1.Update
		attrs.OldObject = old
	}
	resp := a.admission.Validate(ctx, attrs)
	for _, w := range resp.Warnings {
		warning.AddWarning(ctx, "", w)
	}
	// resp.AuditAnnotations are dropped: dnsplane keeps no audit log.
	if resp.Allowed {
		return nil
	}
	refused := apierrors.NewForbidden(resource.GroupResource(), m.GetName(), errors.New("Not allowed by PodSecurity")) //nolint:staticcheck // kube-apiserver's own words, when the library gives no message
	if r := resp.Result; r != nil {
		if r.Message != "" {
			refused.ErrStatus.Message = r.Message
		}
		if r.Reason != "" {
			refused.ErrStatus.Reason = r.Reason
		}
		if r.Details != nil {
			refused.ErrStatus.Details = r.Details
		}
		if r.Code != 0 {
			refused.ErrStatus.Code = r.Code
		}
	}
	return refused
}

// noMetrics drops the library's evaluation counters: dnsplane serves no
// pod_security_* metrics.
type noMetrics struct{}

func (noMetrics) RecordEvaluation(psmetrics.Decision, psapi.LevelVersion, psmetrics.Mode, psapi.Attributes) {
}
func (noMetrics) RecordExemption(psapi.Attributes)   {}
func (noMetrics) RecordError(bool, psapi.Attributes) {}

type noPods struct{}

func (noPods) ListPods(context.Context, string) ([]*corev1.Pod, error) { return nil, nil }
