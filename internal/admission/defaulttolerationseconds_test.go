package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// TestDefaultTolerationsAgainstUpstream: defaultTolerations leaves the
// tolerations upstream's DefaultTolerationSeconds plugin leaves, with its
// default flags, for pods that tolerate the two taints in every way the
// plugin tells apart.
func TestDefaultTolerationsAgainstUpstream(t *testing.T) {
	t.Parallel()
	plugin := defaulttolerationseconds.NewDefaultTolerationSeconds()
	plugin.InspectFeatureGates(nil) // sets its tolerations from the flags' defaults
	tol := func(key string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
	}
	tests := map[string][]corev1.Toleration{
		"none":                      nil,
		"empty":                     {},
		"other taint":               {tol("example.com/x", corev1.TaintEffectNoSchedule)},
		"not-ready NoExecute":       {tol(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)},
		"not-ready any effect":      {tol(corev1.TaintNodeNotReady, "")},
		"not-ready NoSchedule only": {tol(corev1.TaintNodeNotReady, corev1.TaintEffectNoSchedule)},
		"unreachable, own seconds": {{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)}},
		"both":                      {tol(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute), tol(corev1.TaintNodeNotReady, "")},
		"any key NoExecute":         {tol("", corev1.TaintEffectNoExecute)},
		"any key any effect":        {tol("", "")},
		"any key PreferNoSchedule":  {tol("", corev1.TaintEffectPreferNoSchedule)},
		"equal operator, not-ready": {{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpEqual, Value: "x", Effect: corev1.TaintEffectNoExecute}},
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			internal := &core.Pod{}
			if err := upstream.Convert(&corev1.Pod{Spec: corev1.PodSpec{Tolerations: in}}, internal); err != nil {
				t.Fatal(err)
			}
			attrs := admission.NewAttributesRecord(internal, nil, core.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				core.SchemeGroupVersion.WithResource("pods"), "", admission.Create, nil, false, nil)
			if err := plugin.Admit(t.Context(), attrs, nil); err != nil {
				t.Fatal(err)
			}
			want := &corev1.Pod{}
			if err := upstream.Convert(internal, want); err != nil {
				t.Fatal(err)
			}
			got := defaultTolerations(append([]corev1.Toleration(nil), in...))
			if diff := cmp.Diff(want.Spec.Tolerations, got); diff != "" {
				t.Errorf("upstream's plugin (-) and defaultTolerations (+) differ:\n%s", diff)
			}
		})
	}
}
