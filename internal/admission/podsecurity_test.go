package admission

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/warning"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/admission/podsecurity"
	"github.com/dnsplane/dnsplane/internal/registry"
)

type labelledNamespaces map[string]map[string]string

func (n labelledNamespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	labels, ok := n[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, nil
}

type recordedWarnings []string

func (w *recordedWarnings) AddWarning(_, text string) { *w = append(*w, text) }

// TestPodTemplateCarriersPodSecurity: every kind that carries a pod spec
// runs Pod Security admission on it, as kube-apiserver's plugin does on
// pods and on the pod controllers its DefaultPodSpecExtractor knows: in an
// enforce=baseline namespace a hostNetwork pod is refused and every other
// carrier is admitted with kube's warning.
func TestPodTemplateCarriersPodSecurity(t *testing.T) {
	t.Parallel()
	chain := podSecurityChain(t, labelledNamespaces{"team": {"pod-security.kubernetes.io/enforce": "baseline"}})
	const violation = `host namespaces (hostNetwork=true)`
	carriers := 0
	for _, r := range api.Resources() {
		obj := r.New()
		if rc, ok := obj.(*dpcorev1.ReplicationController); ok {
			rc.Spec.Template = &dpcorev1.PodTemplateSpec{} // optional in the type
		}
		specs := api.PodSpecs(obj)
		if len(specs) == 0 {
			continue
		}
		carriers++
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		m.SetName("x")
		m.SetNamespace("team")
		for _, at := range specs {
			at.Spec.HostNetwork = true
			at.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
		}
		var got recordedWarnings
		ctx := warning.WithWarningRecorder(t.Context(), &got)
		err = chain.Validate(ctx, Attributes(ctx, Request{Operation: kadmission.Create, Kind: r.GVK, Resource: r.GroupVersionResource(), Namespace: "team", Name: "x", Object: obj}))
		if r.GVK.Kind == "Pod" {
			if want := `pods "x" is forbidden: violates PodSecurity "baseline:latest": ` + violation; !apierrors.IsForbidden(err) || err.Error() != want {
				t.Errorf("Pod: %v, want 403 %q", err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v, want admitted", r.GVK.Kind, err)
		}
		if want := []string{`would violate PodSecurity "baseline:latest": ` + violation}; !slices.Equal(got, want) {
			t.Errorf("%s: warnings %q, want %q", r.GVK.Kind, got, want)
		}
	}
	if carriers != 9 {
		t.Errorf("%d pod template carriers, want 9", carriers)
	}
}

// TestNamespacePodSecurity: the chain runs Pod Security
// admission on namespace writes, which refuses labels that do not parse,
// with kube's 422.
func TestNamespacePodSecurity(t *testing.T) {
	t.Parallel()
	chain := podSecurityChain(t, labelledNamespaces{})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "nonsense"}}}
	err := chain.Validate(t.Context(), Attributes(t.Context(), Request{Operation: kadmission.Create, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"), Name: "team", Object: ns}))
	const want = `Namespace "team" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "nonsense": must be one of privileged, baseline, restricted`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("namespace create: %v, want 422 %q", err, want)
	}
}

// podSecurityChain is the chain with PodSecurity alone, reading ns, over
// the served kinds' views.
func podSecurityChain(t *testing.T, ns podsecurity.NamespaceGetter) *Chain {
	t.Helper()
	ps, err := podsecurity.New(ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewChain([]Plugin{{"PodSecurity", newPodSecurity(ps, Views(registry.Strategies(registry.Config{})))}})
}

// TestNoPodSecurity: without Pod Security admission (offline validation)
// every pod is admitted.
func TestNoPodSecurity(t *testing.T) {
	t.Parallel()
	chain := NewChain([]Plugin{{"PodSecurity", newPodSecurity(nil, nil)}})
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "baseline"}}
	p.Spec.HostNetwork = true
	if err := chain.Validate(t.Context(), Attributes(t.Context(), Request{Operation: kadmission.Create, Object: p})); err != nil {
		t.Errorf("without Pod Security: %v, want admitted", err)
	}
}
