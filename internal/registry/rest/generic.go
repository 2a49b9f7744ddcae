package rest

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The generic subresources: every kind whose api.Resources row names one
// has it alike, so it is declared here, once, rather than by each kind's
// package. This is the one place outside the row that spells their names.
const (
	// StatusName is the status subresource: the main resource ignores
	// status changes and /status ignores the rest.
	StatusName = "status"
	// ScaleName is the scale subresource: an autoscaling/v1 Scale of the
	// parent's spec.replicas.
	ScaleName = "scale"
)

// Generic returns the declaration of the generic subresource name for a
// kind with strategy st; false when name is not a generic subresource.
func Generic(name string, st Strategy) (Subresource, bool) {
	switch name {
	case StatusName:
		return Status(st), true
	case ScaleName:
		return Scale(), true
	}
	return Subresource{}, false
}

// objectVerbs are the verbs of a subresource that reads and writes its
// parent whole, as kube-apiserver's StatusREST serves them.
var objectVerbs = []string{"get", "patch", "update"}

// Status declares the status subresource of a kind with strategy st:
// kube-apiserver's StatusREST, the kind's store with its status strategy.
func Status(st Strategy) Subresource {
	return Subresource{Name: StatusName, Verbs: objectVerbs, Document: DocumentObject, Update: statusStrategy{st}}
}

// Scale declares the scale subresource: kube-apiserver's ScaleREST of
// Deployments, ReplicaSets, StatefulSets and ReplicationControllers, an
// autoscaling/v1 Scale whatever the parent's group.
func Scale() Subresource {
	return Subresource{
		Name: ScaleName, Kind: autoscalingv1.SchemeGroupVersion.WithKind("Scale"), Verbs: objectVerbs,
		New: func() any { return &autoscalingv1.Scale{} }, Document: DocumentKind, Scale: true,
	}
}

// HasStatus reports whether subs has the status subresource.
func HasStatus(subs []Subresource) bool {
	_, ok := Find(subs, StatusName)
	return ok
}

// MainResetFields are the fields a write of the main resource cannot set,
// so no manager owns them through it: the status, when the kind has a
// status subresource (upstream's strategies' GetResetFields). A scale write
// goes through the main resource's rules and resets the same. nil: none.
func MainResetFields(subs []Subresource) *fieldpath.Set {
	if !HasStatus(subs) {
		return nil
	}
	return fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
}

// statusStrategy is a kind's /status rules: the kind's StatusStrategy when
// it has one, its update rules otherwise.
type statusStrategy struct{ kind Strategy }

var _ SubresourceStrategy = statusStrategy{}

// PrepareForUpdate builds what a /status write stores: the stored object
// with the new status (and the request's annotations for the kinds whose
// status strategy keeps them), defaulted by the kind's status rules.
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old any) any {
	out := clone(old)
	CopyStatus(out, obj)
	m, o := accessor(out), accessor(obj)
	m.SetResourceVersion(o.GetResourceVersion())
	if StatusKeepsAnnotations(s.kind) {
		m.SetAnnotations(o.GetAnnotations())
	}
	if ss, ok := s.kind.(StatusStrategy); ok {
		ss.PrepareForStatusUpdate(ctx, out, old)
	}
	return out
}

// ValidateUpdate is the kind's status rules, or its update rules.
func (s statusStrategy) ValidateUpdate(ctx context.Context, obj, old any) field.ErrorList {
	if ss, ok := s.kind.(StatusStrategy); ok {
		return ss.ValidateStatusUpdate(ctx, obj, old)
	}
	return s.kind.ValidateUpdate(ctx, obj, old)
}

// ResetFields are what /status ignores: the spec and the labels, and the
// annotations unless the kind keeps them.
func (s statusStrategy) ResetFields() *fieldpath.Set {
	set := fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata", "labels"))
	if !StatusKeepsAnnotations(s.kind) {
		set.Insert(fieldpath.MakePathOrDie("metadata", "annotations"))
	}
	return set
}

// clone deep-copies one of the served objects. Every kind in api.Resources
// is a runtime.Object (api's TestEveryKindIsARuntimeObject), so a failed
// assertion is a programming error.
func clone(obj any) any {
	o, ok := obj.(runtime.Object)
	if !ok {
		panic(fmt.Sprintf("rest: cloning %T: not a runtime.Object", obj))
	}
	return o.DeepCopyObject()
}

// accessor is obj's metadata; every served object has it.
func accessor(obj any) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("rest: %T has no object metadata: %v", obj, err))
	}
	return m
}
