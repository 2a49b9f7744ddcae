package pod

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/warning"
	psadmission "k8s.io/pod-security-admission/admission"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// NamespaceGetter reads the namespace whose pod-security.kubernetes.io
// labels decide a pod's Pod Security level.
type NamespaceGetter = psadmission.NamespaceGetter

// podSecurity is kube-apiserver's PodSecurity validating admission plugin
// on pods: upstream's k8s.io/pod-security-admission library with kube's
// default AdmissionConfiguration (every mode privileged:latest when a
// namespace has no label, no exemptions), so a namespace opts in with
// `pod-security.kubernetes.io/enforce` (and `-version`), `warn` and
// `audit` (https://kubernetes.io/docs/concepts/security/pod-security-admission/).
// It matters here because `dnsplane exec` runs a command as root only in
// a privileged container (docs/agent.md, "Who the command runs as").
type podSecurity struct {
	admission *psadmission.Admission
}

// newPodSecurity builds the plugin reading namespaces from ns.
func newPodSecurity(ns NamespaceGetter) (*podSecurity, error) {
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
		// Only namespace admission lists pods, and this plugin admits pods.
		PodLister: noPods{},
	}
	if err := a.CompleteConfiguration(); err != nil {
		return nil, fmt.Errorf("pod security configuration: %w", err)
	}
	if err := a.ValidateConfiguration(); err != nil {
		return nil, fmt.Errorf("pod security configuration: %w", err)
	}
	return &podSecurity{admission: a}, nil
}

// admit evaluates p (old is nil on create) against its namespace's policy:
// warnings go to the request's Warning headers, an enforce violation is
// kube's 403 (`pods "x" is forbidden: violates PodSecurity
// "baseline:latest": ...`), made as kube-apiserver's plugin makes it from
// the library's response.
func (ps *podSecurity) admit(ctx context.Context, p, old *dpcorev1.Pod) error {
	attrs := &psapi.AttributesRecord{
		Name:      p.Name,
		Namespace: p.Namespace,
		Kind:      corev1.SchemeGroupVersion.WithKind("Pod"),
		Resource:  corev1.SchemeGroupVersion.WithResource("pods"),
		Operation: admissionv1.Create,
		Object:    v1Pod(p),
	}
	if old != nil {
		attrs.Operation = admissionv1.Update
		attrs.OldObject = v1Pod(old)
	}
	resp := ps.admission.Validate(ctx, attrs)
	for _, w := range resp.Warnings {
		warning.AddWarning(ctx, "", w)
	}
	if resp.Allowed {
		return nil
	}
	err := apierrors.NewForbidden(corev1.Resource("pods"), p.Name, errors.New("Not allowed by PodSecurity")) //nolint:staticcheck // kube-apiserver's own words, when the library gives no message
	if r := resp.Result; r != nil {
		if r.Message != "" {
			err.ErrStatus.Message = r.Message
		}
		if r.Reason != "" {
			err.ErrStatus.Reason = r.Reason
		}
		if r.Details != nil {
			err.ErrStatus.Details = r.Details
		}
		if r.Code != 0 {
			err.ErrStatus.Code = r.Code
		}
	}
	return err
}

// v1Pod is p as the k8s.io/api Pod the library evaluates (dnsParams,
// which no check reads, aside).
func v1Pod(p *dpcorev1.Pod) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: p.ObjectMeta, Spec: p.Spec.PodSpec, Status: p.Status}
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
