package pod

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/workload"
)

var _ rest.Admitter = Strategy{}

// defaultServiceAccountName is the account a pod that names none runs as
// (upstream's serviceaccount.DefaultServiceAccountName).
const defaultServiceAccountName = "default"

// defaultTolerationSeconds is kube-apiserver's default for
// --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds.
const defaultTolerationSeconds int64 = 300

// Admit is the pod part of kube-apiserver's default mutating admission:
//
//   - DefaultTolerationSeconds, on create and update: NoExecute
//     tolerations of node.kubernetes.io/not-ready and
//     node.kubernetes.io/unreachable for 300 s unless the pod tolerates
//     those taints already. kube-apiserver enables it by default, and
//     kube-controller-manager's taint eviction counts on it, evicting a
//     pod without those tolerations the moment its node turns NotReady;
//   - ServiceAccount, on create: spec.serviceAccountName (and its
//     deprecated alias spec.serviceAccount) defaults to "default", except on
//     mirror pods, which upstream leaves alone. The rest of upstream's plugin
//     is not here: it refuses a pod whose ServiceAccount does not exist and
//     mounts a projected token volume, and dnsplane neither creates
//     ServiceAccounts (kube-controller-manager's serviceaccount controller
//     does) nor issues tokens (docs/apiserver.md, "Admission").
//
// Priority admission waits for PriorityClass to be served.
func (s Strategy) Admit(_ context.Context, obj, old any) error {
	p := obj.(*dpcorev1.Pod)
	if old == nil {
		_, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]
		if p.Spec.ServiceAccountName == "" && !mirror {
			p.Spec.ServiceAccountName = defaultServiceAccountName
			p.Spec.DeprecatedServiceAccount = defaultServiceAccountName //nolint:staticcheck // kept in step with serviceAccountName, as upstream's plugin does
		}
	}
	if s.tolerations {
		p.Spec.Tolerations = defaultTolerations(p.Spec.Tolerations)
	}
	return nil
}

// WithPodSecurity returns s with Pod Security admission ps
// (internal/podsecurity), which refuses a pod that violates its
// namespace's enforce level; nil admits every pod.
func (s Strategy) WithPodSecurity(ps workload.PodSecurity) Strategy {
	s.Strategy = s.Strategy.WithPodSecurity(ps)
	return s
}

// defaultTolerations is what upstream's DefaultTolerationSeconds plugin
// (k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds) does to
// a pod's tolerations: a toleration of any key, or of any effect, counts
// as tolerating the taint. It is not that plugin because its package links
// the generic admission initializer, and with it client-go's dynamic
// client, the CEL OpenAPI resolver and the quota packages, into every
// dnsplane process, the node's cluster DNS and node cache included
// (docs/operations.md, "Memory of the data plane"); admission_test.go
// checks this against the plugin.
func defaultTolerations(ts []corev1.Toleration) []corev1.Toleration {
	notReady, unreachable := false, false
	for _, t := range ts {
		anyEffect := t.Effect == "" || t.Effect == corev1.TaintEffectNoExecute
		notReady = notReady || anyEffect && (t.Key == "" || t.Key == corev1.TaintNodeNotReady)
		unreachable = unreachable || anyEffect && (t.Key == "" || t.Key == corev1.TaintNodeUnreachable)
	}
	add := func(key string) {
		seconds := defaultTolerationSeconds
		ts = append(ts, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds})
	}
	if !notReady {
		add(corev1.TaintNodeNotReady)
	}
	if !unreachable {
		add(corev1.TaintNodeUnreachable)
	}
	return ts
}
