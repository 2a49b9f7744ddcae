package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	kadmission "k8s.io/apiserver/pkg/admission"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// defaultServiceAccountName is the account a pod that names none runs as
// (upstream's serviceaccount.DefaultServiceAccountName).
const defaultServiceAccountName = "default"

// serviceAccount is the defaulting part of upstream's ServiceAccount
// plugin (k8s.io/kubernetes/plugin/pkg/admission/serviceaccount) on pod
// creates: spec.serviceAccountName (and its deprecated alias
// spec.serviceAccount) defaults to "default", except on mirror pods, which
// upstream leaves alone. The rest of upstream's plugin is not here: it
// refuses a pod whose ServiceAccount does not exist and mounts a projected
// token volume (docs/apiserver.md, "Admission").
type serviceAccount struct{ *kadmission.Handler }

var _ kadmission.MutationInterface = serviceAccount{}

func newServiceAccount() kadmission.Interface {
	return serviceAccount{kadmission.NewHandler(kadmission.Create)}
}

// Admit defaults a new pod's service account.
func (serviceAccount) Admit(_ context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	p, ok := a.GetObject().(*dpcorev1.Pod)
	if !ok || a.GetSubresource() != "" {
		return nil
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror || p.Spec.ServiceAccountName != "" {
		return nil
	}
	p.Spec.ServiceAccountName = defaultServiceAccountName
	p.Spec.DeprecatedServiceAccount = defaultServiceAccountName //nolint:staticcheck // kept in step with serviceAccountName, as upstream's plugin does
	return nil
}
