package apiserver

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// validate checks obj (old is nil on create) with the metadata rules and
// the kind's strategy (internal/registry), then the kind's validating
// admission (of the main resource or of the subresource written), as
// kube-apiserver's create, update and /status handlers do.
func validate(ctx context.Context, res *Resource, info requestInfo, obj, old any) error {
	var errs field.ErrorList
	sub, whole := res.objectSubresource(info.Subresource)
	switch {
	case old == nil:
		errs = rest.ValidateCreate(ctx, res.Strategy, res.Namespaced, obj)
	case whole:
		errs = rest.ValidateSubresourceUpdate(ctx, res.Strategy, sub, res.Namespaced, obj, old)
	default:
		errs = rest.ValidateUpdate(ctx, res.Strategy, res.Namespaced, obj, old)
	}
	if len(errs) > 0 {
		return invalid(res, accessor(obj).GetName(), errs)
	}
	switch {
	case info.Subresource == "":
		return rest.ValidateAdmission(ctx, res.Strategy, obj, old)
	case whole:
		return rest.ValidateSubresourceAdmission(ctx, sub, obj, old)
	}
	// /scale: the defaults of kube-apiserver check no scale write.
	return nil
}

// prepareUpdate carries over what no update may change (server metadata)
// and lets the strategy carry over and default the rest.
func prepareUpdate(ctx context.Context, res *Resource, obj, old any) {
	keepServerMetadata(obj, old)
	res.Strategy.PrepareForUpdate(ctx, obj, old)
}

// admitUpdate runs the kind's admission on an update of the main resource
// and then moves the generation by the kind's rule, what admission changed
// included: kube-apiserver's handler records managed fields, then admits,
// then its strategy's PrepareForUpdate compares (so fields admission adds
// are owned by no manager).
func admitUpdate(ctx context.Context, res *Resource, subresource string, obj, old any) error {
	if subresource == "" {
		if err := rest.Admit(ctx, res.Strategy, obj, old); err != nil {
			return err
		}
	}
	nextGeneration(res, obj, old)
	return nil
}

// statusValue is obj's Status field; invalid when the kind has none.
func statusValue(obj any) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status")
}

// cloneObject deep-copies one of our objects. Every kind in api.Resources
// is a runtime.Object (upstream's, or dnsplane's with the generated
// DeepCopyObject; api's TestEveryKindIsARuntimeObject), so a failed
// assertion is a programming error. It replaces a JSON round trip: a
// /scale write no longer encodes and decodes the whole stored object.
func cloneObject(obj any) any {
	o, ok := obj.(runtime.Object)
	if !ok {
		panic(fmt.Sprintf("apiserver: cloning %T: not a runtime.Object", obj))
	}
	return o.DeepCopyObject()
}

// reserve takes what an object holds outside its own key (Service cluster
// IPs) and returns how to give it back if the write fails.
func reserve(ctx context.Context, res *Resource, obj, old any, dryRun bool) (undo func(), err error) {
	if r, ok := res.Strategy.(rest.Reserver); ok {
		return r.Reserve(ctx, obj, old, dryRun)
	}
	return func() {}, nil
}

// release gives back what a deleted object held.
func release(ctx context.Context, res *Resource, obj any) {
	if r, ok := res.Strategy.(rest.Reserver); ok {
		r.Release(ctx, obj)
	}
}
