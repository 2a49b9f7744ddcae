package admission

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/admission/podsecurity"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Viewer returns the k8s.io/api object upstream's libraries judge for a
// served object: the object itself for a k8s.io/api kind, a view without
// the seeds' fields for dnsplane's pod template carriers
// (internal/registry/upstream, Strategy.Upstream); false for a kind that
// has none.
type Viewer func(obj any) (runtime.Object, bool)

// Views returns the Viewer of the kinds api.Resources lists with their
// strategies: a kind's strategy's view where it has one (the pod template
// carriers), the object itself otherwise.
func Views(strategies map[schema.GroupKind]rest.Strategy) Viewer {
	type viewer interface {
		Upstream(obj any) (runtime.Object, func())
	}
	views := map[reflect.Type]viewer{}
	for _, r := range api.Resources() {
		if v, ok := strategies[r.GVK.GroupKind()].(viewer); ok {
			views[reflect.TypeOf(r.New())] = v
		}
	}
	return func(obj any) (runtime.Object, bool) {
		if v, ok := views[reflect.TypeOf(obj)]; ok {
			o, _ := v.Upstream(obj)
			return o, true
		}
		o, ok := obj.(runtime.Object)
		return o, ok
	}
}

// podSecurityPlugin is kube-apiserver's PodSecurity plugin
// (internal/admission/podsecurity, upstream's k8s.io/pod-security-admission library)
// on creates and updates of the main resource of pods (refused when they
// violate their namespace's enforce level), of the pod template carriers
// (warned about only) and of namespaces (labels that do not parse refused;
// a stricter level warns about the pods already there).
type podSecurityPlugin struct {
	*kadmission.Handler
	ps   *podsecurity.Admission
	view Viewer
}

var _ kadmission.ValidationInterface = podSecurityPlugin{}

func newPodSecurity(ps *podsecurity.Admission, view Viewer) kadmission.Interface {
	if ps == nil {
		return nil
	}
	return podSecurityPlugin{Handler: kadmission.NewHandler(kadmission.Create, kadmission.Update), ps: ps, view: view}
}

// Validate judges the k8s.io/api view of the object; kinds the library
// does not judge pass.
func (p podSecurityPlugin) Validate(ctx context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	obj, ok := p.judged(a.GetObject())
	if !ok {
		return nil
	}
	var old runtime.Object
	if a.GetOldObject() != nil {
		old, _ = p.judged(a.GetOldObject())
	}
	return p.ps.Validate(ctx, obj, old)
}

// judged is obj as the library sees it, false when it judges no such kind.
func (p podSecurityPlugin) judged(obj runtime.Object) (runtime.Object, bool) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		return ns, true
	}
	if p.view == nil {
		return nil, false
	}
	v, ok := p.view(obj)
	if !ok || !podsecurity.Judges(v) {
		return nil, false
	}
	return v, true
}
