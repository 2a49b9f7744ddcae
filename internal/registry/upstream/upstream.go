// Package upstream runs kube-apiserver's own defaulting and validation,
// k8s.io/kubernetes used as a library, for the strategies under
// internal/registry: the v1 defaults of kube-apiserver's legacyscheme.Scheme
// (built here on first use, scheme.go), conversion to
// the internal types upstream's validators take, upstream's declarative
// validation merged as kube-apiserver merges it, and Strategy, the strategy
// of a kind served with its k8s.io/api type unchanged. Nothing here is a
// rule of dnsplane's: the per-kind packages choose the validators (as
// upstream's pkg/registry/<group>/<kind>/strategy.go does) and layer
// dnsplane's own rules on top (docs/architecture.md, "Resources and
// strategies").
package upstream

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Default applies upstream's v1 defaults to obj, a k8s.io/api object of a
// registered kind, as kube-apiserver does to every object it decodes.
func Default(obj runtime.Object) { scheme().Default(obj) }

// Scheme is the scheme upstream's registry code is handed where
// kube-apiserver hands it legacyscheme.Scheme (the access reviews'
// declarative validation, internal/apiserver/reviews.go).
func Scheme() *runtime.Scheme { return scheme() }

// Convert converts in (a defaulted k8s.io/api object) into out, a pointer to
// the internal type of the same kind that upstream's validators take.
func Convert(in runtime.Object, out any) error {
	if err := scheme().Convert(in, out, nil); err != nil {
		return fmt.Errorf("converting %T to %T: %w", in, out, err)
	}
	return nil
}

// ConvertVersion converts in into out, two versions of one kind whose
// internal type is hub's (events.k8s.io/v1 and v1 Events, both core.Event
// inside), through that internal type with upstream's conversion
// functions, as kube-apiserver's storage codec converts between a
// request's version and the storage version.
func ConvertVersion(in, out runtime.Object, hub schema.GroupKind) error {
	internal, err := scheme().New(hub.WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return fmt.Errorf("internal type of %s: %w", hub, err)
	}
	if err := Convert(in, internal); err != nil {
		return err
	}
	return Convert(internal, out)
}
