package apiserver

import (
	"context"
	"encoding/json"
	"reflect"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/defaulting"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// nameRule is the rule for a resource's object names, as upstream.
func nameRule(res *Resource) apivalidation.ValidateNameFunc {
	switch res.Plural {
	case "namespaces":
		return apivalidation.ValidateNamespaceName
	case "services":
		return apivalidation.NameIsDNS1035Label
	}
	return apivalidation.NameIsDNSSubdomain
}

// validate checks obj (old is nil on create) with the rules kube-apiserver
// applies that dnsplane implements: object metadata, and the pod DNS rules
// with their ratchets for every pod template carrier.
func (s *Server) validate(res *Resource, obj, old any) error {
	m := accessor(obj)
	errs := apivalidation.ValidateObjectMetaAccessor(m, res.Namespaced, nameRule(res), field.NewPath("metadata"))
	if old != nil {
		errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, accessor(old), field.NewPath("metadata"))...)
	}
	errs = append(errs, validation.ValidateObjectDNS(obj, old, s.opts)...)
	if svc, ok := obj.(*corev1.Service); ok {
		errs = append(errs, validateService(svc)...)
	}
	if len(errs) > 0 {
		return invalid(res, m.GetName(), errs)
	}
	return nil
}

// prepareCreate resets what a client may not set on create and applies the
// defaults.
func prepareCreate(res *Resource, obj any) {
	if res.Status {
		switch res.Plural {
		case "nodes", "namespaces":
			// Nodes register with their status; a namespace's phase is
			// defaulted below.
		default:
			setStatus(obj, reflect.Zero(statusType(obj)))
		}
	}
	if p, ok := obj.(*dpcorev1.Pod); ok && p.Status.Phase == "" {
		p.Status.Phase = corev1.PodPending
	}
	defaulting.Object(obj)
}

// prepareUpdate carries over what an update of the main resource may not
// change (status, when the resource has a status subresource), bumps the
// generation when the spec changed, and applies the defaults.
func prepareUpdate(res *Resource, obj, old any) {
	keepServerMetadata(obj, old)
	if res.Status {
		setStatus(obj, statusValue(old))
	}
	defaulting.Object(obj)
	if specChanged(obj, old) {
		m := accessor(obj)
		m.SetGeneration(accessor(old).GetGeneration() + 1)
	}
}

// prepareStatusUpdate builds the object a /status update stores: the old
// object with the new status.
func prepareStatusUpdate(obj, old any) any {
	out := cloneObject(old)
	setStatus(out, statusValue(obj))
	accessor(out).SetResourceVersion(accessor(obj).GetResourceVersion())
	return out
}

func statusValue(obj any) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status")
}

func statusType(obj any) reflect.Type { return statusValue(obj).Type() }

func setStatus(obj any, v reflect.Value) {
	f := statusValue(obj)
	if f.IsValid() && f.CanSet() {
		f.Set(v)
	}
}

// specChanged compares the specs as JSON: defaulted nils and empty values
// encode alike, so only real changes bump the generation.
func specChanged(obj, old any) bool {
	a := reflect.ValueOf(obj).Elem().FieldByName("Spec")
	b := reflect.ValueOf(old).Elem().FieldByName("Spec")
	if !a.IsValid() || !b.IsValid() {
		return false
	}
	ja, errA := json.Marshal(a.Interface())
	jb, errB := json.Marshal(b.Interface())
	return errA != nil || errB != nil || string(ja) != string(jb)
}

// cloneObject deep-copies one of our objects through JSON.
func cloneObject(obj any) any {
	data, err := json.Marshal(obj)
	if err != nil {
		panic("apiserver: cloning object: " + err.Error())
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface()
	if err := json.Unmarshal(data, out); err != nil {
		panic("apiserver: cloning object: " + err.Error())
	}
	return out
}

// reserve takes what an object holds outside its own key (Service cluster
// IPs) and returns how to give it back if the write fails.
func (s *Server) reserve(ctx context.Context, res *Resource, obj, old any, dryRun bool) (undo func(), err error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return func() {}, nil
	}
	var oldSvc *corev1.Service
	if old != nil {
		oldSvc = old.(*corev1.Service)
	}
	return s.allocateClusterIP(ctx, svc, oldSvc, dryRun)
}

// release gives back what a deleted object held.
func (s *Server) release(ctx context.Context, obj any) {
	if svc, ok := obj.(*corev1.Service); ok {
		s.releaseClusterIPs(ctx, svc)
	}
}
