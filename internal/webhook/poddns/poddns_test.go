package poddns

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
)

func params(search ...string) string {
	return dnsparams.Encode(&dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: search}})
}

// rewrittenPod is pod p (Custom with search) after the webhook's rewrite on
// the stock cluster, with user's dnsConfig merged.
func rewrittenPod(t *testing.T, user *corev1.PodDNSConfig, search ...string) *dpcorev1.Pod {
	t.Helper()
	pod := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns1", Annotations: map[string]string{ParamsAnnotation: params(search...)}}}
	pod.Spec.DNSPolicy = dpcorev1.DNSCustom
	pod.Spec.DNSConfig = user.DeepCopy()
	if _, err := Rewrite(specAt(pod), nil, "ns1", stock); err != nil {
		t.Fatal(err)
	}
	return pod
}

// TestRewriteUpdates covers what clients do to an object the webhook has
// already rewritten; prev is always the stored, rewritten object.
func TestRewriteUpdates(t *testing.T) {
	t.Parallel()
	user := &corev1.PodDNSConfig{Searches: []string{"user.example"}, Options: []corev1.PodDNSConfigOption{{Name: "timeout", Value: ptr("2")}}}
	for _, tc := range []struct {
		name       string
		edit       func(p *dpcorev1.Pod)
		wantPolicy corev1.DNSPolicy
		wantAnn    map[string]string // nil: PolicyAnnotation absent
		wantSearch []string
		wantOpts   []string
		wantNoCfg  bool
	}{
		{
			name:       "nothing changed (a controller's PUT)",
			edit:       func(*dpcorev1.Pod) {},
			wantPolicy: corev1.DNSNone, wantAnn: map[string]string{PolicyAnnotation: "Custom"},
			wantSearch: []string{"a.example", "user.example"}, wantOpts: []string{"timeout:2"},
		},
		{
			name:       "parameters changed (client-side apply of a new annotation)",
			edit:       func(p *dpcorev1.Pod) { p.Annotations[ParamsAnnotation] = params("b.example", "$(HOST)") },
			wantPolicy: corev1.DNSNone, wantAnn: map[string]string{PolicyAnnotation: "Custom"},
			wantSearch: []string{"b.example", "corp.example.com", "example.com", "user.example"}, wantOpts: []string{"timeout:2"},
		},
		{
			name: "policy re-applied as Custom, dnsConfig left as stored",
			edit: func(p *dpcorev1.Pod) {
				p.Spec.DNSPolicy = dpcorev1.DNSCustom
				p.Annotations[ParamsAnnotation] = params("c.example")
			},
			wantPolicy: corev1.DNSNone, wantAnn: map[string]string{PolicyAnnotation: "Custom"},
			wantSearch: []string{"c.example", "user.example"}, wantOpts: []string{"timeout:2"},
		},
		{
			name: "server-side apply of the original manifest",
			edit: func(p *dpcorev1.Pod) {
				p.Spec.DNSPolicy = dpcorev1.DNSCustom
				p.Spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{"user2.example"}}
			},
			wantPolicy: corev1.DNSNone, wantAnn: map[string]string{PolicyAnnotation: "Custom"},
			wantSearch: []string{"a.example", "user2.example"},
		},
		{
			name:       "user edits the rewritten dnsConfig",
			edit:       func(p *dpcorev1.Pod) { p.Spec.DNSConfig.Searches = append(p.Spec.DNSConfig.Searches, "more.example") },
			wantPolicy: corev1.DNSNone, wantAnn: map[string]string{PolicyAnnotation: "Custom"},
			wantSearch: []string{"a.example", "user.example", "more.example"}, wantOpts: []string{"timeout:2"},
		},
		{
			name:       "switched to autopath",
			edit:       func(p *dpcorev1.Pod) { p.Spec.DNSPolicy = dpcorev1.DNSClusterFirstWithAutopath },
			wantPolicy: corev1.DNSNone, wantAnn: map[string]string{PolicyAnnotation: "ClusterFirstWithAutopath"},
			wantSearch: []string{"search.ns1.cluster.local.ap.k8s.io", "user.example"}, wantOpts: []string{"ndots:5", "timeout:2"},
		},
		{
			name: "switched back to ClusterFirst by client-side apply",
			edit: func(p *dpcorev1.Pod) {
				p.Spec.DNSPolicy = corev1.DNSClusterFirst
				delete(p.Annotations, ParamsAnnotation)
			},
			wantPolicy: corev1.DNSClusterFirst,
			wantSearch: []string{"user.example"}, wantOpts: []string{"timeout:2"},
		},
		{
			name: "switched to None by removing the policy annotation",
			edit: func(p *dpcorev1.Pod) {
				delete(p.Annotations, PolicyAnnotation)
				delete(p.Annotations, ParamsAnnotation)
			},
			wantPolicy: corev1.DNSNone,
			wantSearch: []string{"a.example", "user.example"}, wantOpts: []string{"timeout:2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stored := rewrittenPod(t, user, "a.example")
			pod := stored.DeepCopy()
			tc.edit(pod)
			if _, err := Rewrite(specAt(pod), ptr(specAt(stored)), "ns1", stock); err != nil {
				t.Fatal(err)
			}
			if pod.Spec.DNSPolicy != tc.wantPolicy {
				t.Errorf("dnsPolicy %q, want %q", pod.Spec.DNSPolicy, tc.wantPolicy)
			}
			if got, want := pod.Annotations[PolicyAnnotation], tc.wantAnn[PolicyAnnotation]; got != want {
				t.Errorf("%s = %q, want %q", PolicyAnnotation, got, want)
			}
			if pod.Spec.DNSConfig == nil {
				if !tc.wantNoCfg {
					t.Fatalf("no dnsConfig")
				}
				return
			}
			if !slices.Equal(pod.Spec.DNSConfig.Searches, tc.wantSearch) {
				t.Errorf("searches %q, want %q", pod.Spec.DNSConfig.Searches, tc.wantSearch)
			}
			var opts []string
			for _, o := range pod.Spec.DNSConfig.Options {
				opts = append(opts, optionString(o))
			}
			if !slices.Equal(opts, tc.wantOpts) {
				t.Errorf("options %q, want %q", opts, tc.wantOpts)
			}
		})
	}
}

// TestStrayParamsAnnotationDropped: as dnsplane's API server does, the
// parameters annotation goes from a spec whose policy is not Custom.
func TestStrayParamsAnnotationDropped(t *testing.T) {
	t.Parallel()
	pod := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns1", Annotations: map[string]string{ParamsAnnotation: params("a.example"), "keep": "me"}}}
	pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	res, err := Rewrite(specAt(pod), nil, "ns1", stock)
	if err != nil || !res.Changed {
		t.Fatalf("changed=%v err=%v", res.Changed, err)
	}
	if _, ok := pod.Annotations[ParamsAnnotation]; ok || pod.Annotations["keep"] != "me" || pod.Spec.DNSPolicy != corev1.DNSClusterFirst {
		t.Errorf("annotations %v policy %q", pod.Annotations, pod.Spec.DNSPolicy)
	}
}

// TestKindsAreTheTemplateCarriers keeps the GVR table in step with api: the
// nine kinds with a pod spec, each found by api.PodSpecs.
func TestKindsAreTheTemplateCarriers(t *testing.T) {
	t.Parallel()
	kinds := Kinds()
	if len(kinds) != 9 {
		t.Fatalf("%d kinds, want 9", len(kinds))
	}
	for _, k := range templateKinds {
		gvr := schema.GroupVersionResource{Group: k.resource.Group, Version: k.resource.Version, Resource: k.resource.Resource}
		r, ok := kinds[gvr]
		if !ok {
			t.Errorf("%s not reviewed", gvr)
			continue
		}
		obj := r.New()
		// A ReplicationController's template is a pointer: give it one.
		if rc, ok := obj.(*dpcorev1.ReplicationController); ok {
			rc.Spec.Template = &dpcorev1.PodTemplateSpec{}
		}
		if len(api.PodSpecs(obj)) != 1 {
			t.Errorf("%s: api.PodSpecs finds no pod spec in %T", gvr, obj)
		}
	}
}
