package podsecurity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzValidateNamespaceLabels: pod-security.kubernetes.io label values are
// a user's input, parsed by upstream's library on every namespace write
// and on every pod and template write in the namespace. Whatever they
// hold, a namespace write is admitted or refused with a 422, never
// panics, and a template in that namespace is never refused.
func FuzzValidateNamespaceLabels(f *testing.F) {
	f.Add("baseline", "v1.30", "restricted", "latest", "privileged", "")
	f.Add("nonsense", "v1.x", "", "", "", "")
	f.Add("restricted", "v999.999", "baseline", "v0.0", "x", "v1")
	f.Fuzz(func(t *testing.T, enforce, enforceVersion, warn, warnVersion, audit, auditVersion string) {
		labels := map[string]string{}
		for k, v := range map[string]string{
			"pod-security.kubernetes.io/enforce": enforce, "pod-security.kubernetes.io/enforce-version": enforceVersion,
			"pod-security.kubernetes.io/warn": warn, "pod-security.kubernetes.io/warn-version": warnVersion,
			"pod-security.kubernetes.io/audit": audit, "pod-security.kubernetes.io/audit-version": auditVersion,
		} {
			if v != "" {
				labels[k] = v
			}
		}
		ns := namespace("team", labels)
		a := newAdmission(t, namespaces{"team": ns}, pods{pods: []*corev1.Pod{testPod("web", "team", nil)}})
		for _, old := range []runtime.Object{nil, namespace("team", nil)} {
			if _, err := validate(t, a, ns, old); err != nil && !apierrors.IsInvalid(err) {
				t.Fatalf("namespace %v: %v, want admitted or 422", labels, err)
			}
		}
		for _, obj := range carriers("team", spec(nil)) {
			if _, err := validate(t, a, obj, nil); err != nil {
				t.Fatalf("%T in namespace %v: %v, want admitted", obj, labels, err)
			}
		}
		if _, err := validate(t, a, testPod("p", "team", nil), nil); err != nil && !apierrors.IsForbidden(err) {
			t.Fatalf("pod in namespace %v: %v, want admitted or 403", labels, err)
		}
	})
}
