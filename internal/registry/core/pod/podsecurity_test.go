package pod

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/podsecurity"
	"github.com/dnsplane/dnsplane/internal/validation"
)

type namespaces map[string]*corev1.Namespace

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// TestPodSecurity: the pod strategy's validating admission is Pod Security
// admission (internal/podsecurity, where its rules are tested) on the
// k8s.io/api view of dnsplane's Pod: an enforce violation is kube's 403,
// and without it every pod is admitted.
func TestPodSecurity(t *testing.T) {
	t.Parallel()
	ps, err := podsecurity.New(namespaces{
		"baseline": {ObjectMeta: metav1.ObjectMeta{Name: "baseline", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "baseline"}}
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	p.Spec.HostNetwork = true

	err = New(validation.Options{}).WithPodSecurity(ps).ValidateAdmission(t.Context(), p, nil)
	const want = `pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("with Pod Security: %v, want 403 %q", err, want)
	}
	if err := New(validation.Options{}).WithPodSecurity(nil).ValidateAdmission(t.Context(), p, nil); err != nil {
		t.Errorf("without Pod Security: %v, want admitted", err)
	}
}
