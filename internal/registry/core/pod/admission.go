package pod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

var _ rest.Admitter = Strategy{}

// defaultServiceAccountName is the account a pod that names none runs as
// (upstream's serviceaccount.DefaultServiceAccountName).
const defaultServiceAccountName = "default"

// newTolerationSeconds is upstream's DefaultTolerationSeconds plugin with
// its defaults (300 s for not-ready and unreachable): kube-apiserver
// enables it by default, and kube-controller-manager's taint eviction
// counts on it, evicting a pod without those tolerations the moment its
// node turns NotReady.
func newTolerationSeconds() *defaulttolerationseconds.Plugin {
	p := defaulttolerationseconds.NewDefaultTolerationSeconds()
	// It reads no gate; this is what sets its tolerations from the
	// default flag values.
	p.InspectFeatureGates(nil)
	return p
}

// Admit is the pod part of kube-apiserver's default mutating admission:
//
//   - DefaultTolerationSeconds, upstream's plugin itself, on create and
//     update: NoExecute tolerations of node.kubernetes.io/not-ready and
//     node.kubernetes.io/unreachable for 300 s unless the pod tolerates
//     those taints already;
//   - ServiceAccount, on create: spec.serviceAccountName (and its
//     deprecated alias spec.serviceAccount) defaults to "default", except on
//     mirror pods, which upstream leaves alone. The rest of upstream's plugin
//     is not here: it refuses a pod whose ServiceAccount does not exist and
//     mounts a projected token volume, and dnsplane neither creates
//     ServiceAccounts (kube-controller-manager's serviceaccount controller
//     does) nor issues tokens (docs/apiserver.md, "Admission").
//
// Priority admission waits for PriorityClass to be served.
func (s Strategy) Admit(ctx context.Context, obj, old any) error {
	p := obj.(*dpcorev1.Pod)
	op := admission.Update
	if old == nil {
		op = admission.Create
		_, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]
		if p.Spec.ServiceAccountName == "" && !mirror {
			p.Spec.ServiceAccountName = defaultServiceAccountName
			p.Spec.DeprecatedServiceAccount = defaultServiceAccountName //nolint:staticcheck // kept in step with serviceAccountName, as upstream's plugin does
		}
	}
	return s.defaultTolerations(ctx, p, op)
}

// defaultTolerations runs upstream's plugin on an internal pod holding only
// p's tolerations, the one field it reads or writes, and copies its result
// back.
func (s Strategy) defaultTolerations(ctx context.Context, p *dpcorev1.Pod, op admission.Operation) error {
	plugin := s.tolerations
	if plugin == nil || !plugin.Handles(op) {
		return nil
	}
	in := &core.Pod{}
	if err := upstream.Convert(&corev1.Pod{Spec: corev1.PodSpec{Tolerations: p.Spec.Tolerations}}, in); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("DefaultTolerationSeconds: %w", err))
	}
	in.Name, in.Namespace = p.Name, p.Namespace
	attrs := admission.NewAttributesRecord(in, nil, core.SchemeGroupVersion.WithKind("Pod"), p.Namespace, p.Name,
		core.SchemeGroupVersion.WithResource("pods"), "", op, nil, false, nil)
	if err := plugin.Admit(ctx, attrs, nil); err != nil {
		return err
	}
	out := &corev1.Pod{}
	if err := upstream.Convert(in, out); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("DefaultTolerationSeconds: %w", err))
	}
	p.Spec.Tolerations = out.Spec.Tolerations
	return nil
}
