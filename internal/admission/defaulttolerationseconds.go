package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	kadmission "k8s.io/apiserver/pkg/admission"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// defaultTolerationSeconds is kube-apiserver's default for
// --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds.
const defaultTolerationSeconds int64 = 300

// defaultTolerationSecondsPlugin is upstream's DefaultTolerationSeconds
// (k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds) on pod
// creates and updates: NoExecute tolerations of node.kubernetes.io/not-ready
// and node.kubernetes.io/unreachable for 300 s unless the pod tolerates
// those taints already. kube-controller-manager's taint eviction counts on
// it, evicting a pod without them the moment its node turns NotReady.
//
// It is not upstream's plugin, which works on upstream's internal Pod: the
// served Pod would be converted there and back on every pod write for a
// dozen lines of rules. defaulttolerationseconds_test.go checks it against
// the plugin.
type defaultTolerationSecondsPlugin struct{ *kadmission.Handler }

var _ kadmission.MutationInterface = defaultTolerationSecondsPlugin{}

func newDefaultTolerationSeconds() kadmission.Interface {
	return defaultTolerationSecondsPlugin{kadmission.NewHandler(kadmission.Create, kadmission.Update)}
}

// Admit adds the tolerations a pod lacks.
func (defaultTolerationSecondsPlugin) Admit(_ context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	if p, ok := a.GetObject().(*dpcorev1.Pod); ok && a.GetSubresource() == "" {
		p.Spec.Tolerations = defaultTolerations(p.Spec.Tolerations)
	}
	return nil
}

// defaultTolerations is what upstream's plugin does to a pod's
// tolerations: a toleration of any key, or of any effect, counts as
// tolerating the taint.
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
