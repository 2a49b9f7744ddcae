package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
)

func params(search ...string) *dpcorev1.PodDNSParams {
	return &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: search}}
}

// side is one pod spec and its metadata as a test sets them: the policy
// (Custom when empty), the field, and the annotation (absent when nil).
type side struct {
	policy     corev1.DNSPolicy
	params     *dpcorev1.PodDNSParams
	annotation *string
}

func annotated(p *dpcorev1.PodDNSParams) *string { v := dnsparams.Encode(p); return &v }
func raw(v string) *string                       { return &v }

// carriers returns one new object of every kind that carries a pod spec,
// with s set on each of its specs.
func carriers(t testing.TB, s *side) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, r := range api.Resources() {
		obj := r.New()
		if rc, ok := obj.(*dpcorev1.ReplicationController); ok {
			rc.Spec.Template = &dpcorev1.PodTemplateSpec{} // optional in the type
		}
		specs := api.PodSpecs(obj)
		if len(specs) == 0 {
			continue
		}
		if s != nil {
			for _, at := range specs {
				at.Spec.DNSPolicy = s.policy
				if s.policy == "" {
					at.Spec.DNSPolicy = dpcorev1.DNSCustom
				}
				at.Spec.DNSParams = s.params.DeepCopy()
				if s.annotation != nil {
					at.Meta.Annotations = map[string]string{"keep": "me", dnsparams.Annotation: *s.annotation}
				} else {
					at.Meta.Annotations = map[string]string{"keep": "me"}
				}
			}
		}
		out[r.GVK.Kind] = obj
	}
	if len(out) != 9 {
		t.Fatalf("%d pod template carriers, want 9", len(out))
	}
	return out
}

// TestMirrorDNSParams holds every carrier to the rules of docs/pod-dns.md,
// "dnsParams and controllers", on create (old nil) and update.
func TestMirrorDNSParams(t *testing.T) {
	t.Parallel()
	a, b := params("a.example.com"), params("$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)")
	const malformed = `{"custom":{"searches":["a.com"]}}`
	for _, tt := range []struct {
		name string
		old  *side // nil: create
		obj  side
		// want is the field and the annotation after preparation.
		want     *dpcorev1.PodDNSParams
		wantAnno *string
	}{
		{name: "create: field set writes the annotation",
			obj: side{params: a}, want: a, wantAnno: annotated(a)},
		{name: "create: field wins over a stale annotation",
			obj: side{params: a, annotation: annotated(b)}, want: a, wantAnno: annotated(a)},
		{name: "create: field wins over a malformed annotation",
			obj: side{params: a, annotation: raw(malformed)}, want: a, wantAnno: annotated(a)},
		{name: "create: field absent, restored from the annotation (a controller's create)",
			obj: side{annotation: annotated(b)}, want: b, wantAnno: annotated(b)},
		{name: "create: annotation in another JSON form is restored and rewritten canonically",
			obj: side{annotation: raw(`{ "custom": { "search": [ "a.example.com" ] } }`)}, want: a, wantAnno: annotated(a)},
		{name: "create: malformed annotation left for validation",
			obj: side{annotation: raw(malformed)}, wantAnno: raw(malformed)},
		{name: "create: neither",
			obj: side{}},
		{name: "create: policy not Custom drops the annotation",
			obj: side{policy: corev1.DNSClusterFirst, annotation: annotated(a)}},
		{name: "create: field set with another policy is still mirrored (validation forbids the field)",
			obj: side{policy: corev1.DNSClusterFirst, params: a}, want: a, wantAnno: annotated(a)},

		{name: "update: annotation unchanged keeps the stored field (a controller's PUT)",
			old: &side{params: a, annotation: annotated(a)}, obj: side{annotation: annotated(a)}, want: a, wantAnno: annotated(a)},
		{name: "update: stored before mirroring, no annotation on either side, keeps the field",
			old: &side{params: a}, obj: side{}, want: a, wantAnno: annotated(a)},
		{name: "update: annotation changed restores from it (rollout undo)",
			old: &side{params: a, annotation: annotated(a)}, obj: side{annotation: annotated(b)}, want: b, wantAnno: annotated(b)},
		{name: "update: annotation removed with the field removes the field",
			old: &side{params: a, annotation: annotated(a)}, obj: side{}},
		{name: "update: annotation changed to a malformed value is left for validation",
			old: &side{params: a, annotation: annotated(a)}, obj: side{annotation: raw(malformed)}, wantAnno: raw(malformed)},
		{name: "update: field set wins over the stored annotation",
			old: &side{params: a, annotation: annotated(a)}, obj: side{params: b, annotation: annotated(a)}, want: b, wantAnno: annotated(b)},
		{name: "update: switched to another policy without the field drops both",
			old: &side{params: a, annotation: annotated(a)}, obj: side{policy: corev1.DNSClusterFirst, annotation: annotated(a)}},
		{name: "update: switched to Custom, restored from the annotation",
			old: &side{policy: corev1.DNSClusterFirst}, obj: side{annotation: annotated(b)}, want: b, wantAnno: annotated(b)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs := carriers(t, &tt.obj)
			var olds map[string]any
			if tt.old != nil {
				olds = carriers(t, tt.old)
			}
			for kind, obj := range objs {
				var old any
				if olds != nil {
					old = olds[kind]
				}
				MirrorDNSParams(obj, old)
				at := api.PodSpecs(obj)[0]
				if !reflect.DeepEqual(at.Spec.DNSParams, tt.want) {
					t.Errorf("%s: dnsParams %s, want %s", kind, enc(at.Spec.DNSParams), enc(tt.want))
				}
				got, ok := at.Meta.Annotations[dnsparams.Annotation]
				switch {
				case tt.wantAnno == nil && ok:
					t.Errorf("%s: annotation %s, want none", kind, got)
				case tt.wantAnno != nil && (!ok || got != *tt.wantAnno):
					t.Errorf("%s: annotation %q (present %v), want %s", kind, got, ok, *tt.wantAnno)
				}
				if at.Meta.Annotations["keep"] != "me" {
					t.Errorf("%s: other annotations changed: %v", kind, at.Meta.Annotations)
				}
				if old != nil && tt.old.params != nil && at.Spec.DNSParams != nil && at.Spec.DNSParams == api.PodSpecs(old)[0].Spec.DNSParams {
					t.Errorf("%s: the stored field is shared, not copied", kind)
				}
			}
		})
	}
}

func enc(p *dpcorev1.PodDNSParams) string {
	if p == nil {
		return "<nil>"
	}
	return dnsparams.Encode(p)
}

// TestMirrorDNSParamsIgnoresOtherKinds: objects without a pod spec, and an
// old object of another type, change nothing and do not panic.
func TestMirrorDNSParamsIgnoresOtherKinds(t *testing.T) {
	t.Parallel()
	MirrorDNSParams(&corev1.ConfigMap{}, nil)
	MirrorDNSParams(nil, nil)
	objs := carriers(t, &side{annotation: annotated(params("a.com"))})
	MirrorDNSParams(objs["Deployment"], objs["ReplicaSet"])
	if p := api.PodSpecs(objs["Deployment"])[0].Spec.DNSParams; !reflect.DeepEqual(p, params("a.com")) {
		t.Errorf("with an old object of another kind, dnsParams %s, want restored as on create", enc(p))
	}
}

// BenchmarkMirrorDNSParams: what the mirror adds to each write of a Custom
// template (go test -run '^$' -bench MirrorDNSParams ./internal/registry/workload/).
func BenchmarkMirrorDNSParams(b *testing.B) {
	p := params("$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)")
	p.Custom.Options = []string{"ndots:2"}
	for _, bc := range []struct {
		name string
		obj  side
		old  *side
	}{
		{"create with the field", side{params: p}, nil},
		{"create from the annotation", side{annotation: annotated(p)}, nil},
		{"PUT without the field", side{annotation: annotated(p)}, &side{params: p, annotation: annotated(p)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			objs := carriers(b, &bc.obj)
			var old any
			if bc.old != nil {
				old = carriers(b, bc.old)["Deployment"]
			}
			obj := objs["Deployment"]
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				o := obj.(interface{ DeepCopyObject() runtime.Object }).DeepCopyObject()
				b.StartTimer()
				MirrorDNSParams(o, old)
			}
		})
	}
}
