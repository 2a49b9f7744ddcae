// Package rest is the contract between the API server's generic REST
// handlers and the per-kind strategies under internal/registry, in the shape
// of kube-apiserver's RESTCreateStrategy, RESTUpdateStrategy and
// DeclarativeValidationStrategy (k8s.io/apiserver/pkg/registry/rest). The
// generic code knows no kind: what differs per kind (what a client may not
// set, defaults, validation, field selectors, what an object holds outside
// its key, what a delete must do first) is asked of the kind's Strategy.
// See docs/architecture.md, "Adding a kind".
package rest

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
)

// Strategy holds one kind's rules for create and update. Objects are
// pointers to the Go type api.Resource.New returns for the kind.
type Strategy interface {
	// PrepareForCreate clears what a client may not set on create (the
	// status, when the kind has a status subresource) and applies the
	// kind's defaults, before validation.
	PrepareForCreate(ctx context.Context, obj any)
	// PrepareForUpdate carries over from old what an update of the main
	// resource may not change and applies the kind's defaults.
	PrepareForUpdate(ctx context.Context, obj, old any)
	// Validate checks a new object, its metadata with the kind's name rule
	// included, as upstream's Validate<Kind> functions do.
	Validate(ctx context.Context, obj any) field.ErrorList
	// ValidateUpdate checks obj replacing old, as upstream's
	// Validate<Kind>Update functions do. The generic metadata update rules
	// (ValidateUpdate below) run before it.
	ValidateUpdate(ctx context.Context, obj, old any) field.ErrorList
}

// StatusStrategy is a Strategy whose kind's /status writes have rules of
// their own (upstream's <kind>StatusStrategy), which the generic status
// subresource (generic.go) applies. A kind with a status subresource and no
// StatusStrategy validates /status writes with ValidateUpdate.
type StatusStrategy interface {
	// PrepareForStatusUpdate applies the kind's defaults to obj, the object
	// a /status write stores (the stored object with the new status).
	PrepareForStatusUpdate(ctx context.Context, obj, old any)
	// ValidateStatusUpdate checks the status of obj replacing old's.
	ValidateStatusUpdate(ctx context.Context, obj, old any) field.ErrorList
}

// StatusAnnotations is a Strategy whose /status writes keep the request's
// annotations, as upstream's status strategies of the workload kinds do
// (they reset the spec, and labels for the apps kinds, not annotations):
// the deployment controller records deployment.kubernetes.io/revision
// through /status, and kubectl rollout undo reads it back.
type StatusAnnotations interface {
	StatusKeepsAnnotations() bool
}

// StatusKeepsAnnotations reports whether s's /status writes keep the
// request's annotations.
func StatusKeepsAnnotations(s Strategy) bool {
	sa, ok := s.(StatusAnnotations)
	return ok && sa.StatusKeepsAnnotations()
}

// Declarative is a Strategy whose kind has upstream declarative validation
// (tags in the API types, generated code), which kube-apiserver runs after
// the handwritten checks and merges into their errors.
type Declarative interface {
	// ValidateDeclaratively merges the declarative validation of obj (old
	// is nil on create) into errs and returns the result; subresource is
	// the one written on a write through a subresource's own strategy
	// (status, finalize, approval: ValidateSubresourceUpdate), "" otherwise.
	ValidateDeclaratively(ctx context.Context, obj, old any, errs field.ErrorList, subresource string) field.ErrorList
}

// FieldSelectable is a Strategy whose kind supports field selectors beyond
// metadata.name and metadata.namespace, which every kind has.
type FieldSelectable interface {
	// SelectableFields lists the extra fields a fieldSelector may name.
	SelectableFields() []string
	// FieldSet returns their values for obj.
	FieldSet(obj any) fields.Set
}

// WatchIndexed is a Strategy whose kind has a field watches ask for one
// value of at scale (a pod's spec.nodeName: one watch per node agent and
// kubelet), so the watch cache routes each event to those watches only, as
// kube's pod storage does with its NodeNameTriggerFunc. The field must be one
// of SelectableFields.
type WatchIndexed interface {
	FieldSelectable
	WatchIndexField() string
}

// Reserver is a Strategy whose objects hold something outside their own key
// (a Service's cluster IP). The generic code reserves before each write and
// gives back on a failed write and after a delete. Objects of such a kind
// are deleted one by one, never by prefix, so that each is released.
type Reserver interface {
	// Reserve takes what obj needs (old is nil on create) and returns how
	// to give it back if the write fails. A dry run reserves nothing.
	Reserve(ctx context.Context, obj, old any, dryRun bool) (undo func(), err error)
	// Release gives back what a deleted object held.
	Release(ctx context.Context, obj any)
}

// UpdateReleaser is a Reserver whose objects may stop holding something
// on update (a Service's node ports on a type change): after an update is
// written, the generic code calls ReleaseUpdated to give back what old held
// and obj does not.
type UpdateReleaser interface {
	ReleaseUpdated(ctx context.Context, obj, old any)
}

// DeleteHook is a Strategy with deletes it never allows.
type DeleteHook interface {
	// CheckDelete refuses, before anything is read, a delete the kind
	// never allows (an API status error), or returns nil.
	CheckDelete(name string) error
}

// DeleteStep is what a kind's own delete stage (StagedDeleter) decided.
type DeleteStep int

const (
	// DeleteGeneric goes on with the generic rules: grace, finalizers,
	// removal.
	DeleteGeneric DeleteStep = iota
	// DeleteMarked stores the object as the stage changed it and keeps it.
	DeleteMarked
	// DeleteWaits keeps the object unchanged.
	DeleteWaits
)

// StagedDeleter is a Strategy whose objects pass a stage of the kind's own
// before the generic delete rules apply, and stay while it lasts: a
// namespace is Terminating until the namespace controller has emptied it
// and removed its spec.finalizers (upstream's namespace REST.Delete and
// ShouldDeleteNamespaceDuringUpdate, pkg/registry/core/namespace/storage).
type StagedDeleter interface {
	// BeginDelete is called with the object as read (a copy the caller
	// stores on DeleteMarked) and the request's options.
	BeginDelete(obj any, opts *metav1.DeleteOptions, now time.Time) DeleteStep
	// KeepsObject reports whether obj, being deleted, stays even when an
	// update left it without metadata.finalizers.
	KeepsObject(obj any) bool
}

// Default is the strategy of a kind with no rules of its own (dnsplane's
// own API): object metadata with DNS subdomain names, and the status
// subresource split when Status is set. Kinds with rules embed it and
// override what differs.
type Default struct {
	// Status is true when the kind has a status subresource.
	Status bool
	// Namespaced is true when the kind's objects live in a namespace.
	Namespaced bool
	// ReturnDeletedObject makes an immediate delete answer with the
	// deleted object instead of a Status: upstream's
	// Store.ReturnDeletedObject, set in the kind's
	// pkg/registry/<group>/<kind>/storage/storage.go (docs/apiserver.md,
	// "Deletion").
	ReturnDeletedObject bool
	// GarbageCollection is the kind's default garbage collection policy,
	// upstream's DefaultGarbageCollectionPolicy; "" when the kind has none.
	GarbageCollection genericrest.GarbageCollectionPolicy
}

var (
	_ Strategy                                    = Default{}
	_ genericrest.GarbageCollectionDeleteStrategy = Default{}
	_ genericrest.MayReturnFullObjectDeleter      = Default{}
)

// DeleteReturnsDeletedObject reports d.ReturnDeletedObject, under
// upstream's interface name.
func (d Default) DeleteReturnsDeletedObject() bool { return d.ReturnDeletedObject }

// DefaultGarbageCollectionPolicy returns d.GarbageCollection. Upstream's
// Job and ReplicationController strategies choose by the request's group
// version; dnsplane serves each kind at one version, so the policy is a
// constant per kind.
func (d Default) DefaultGarbageCollectionPolicy(context.Context) genericrest.GarbageCollectionPolicy {
	return d.GarbageCollection
}

// PrepareForCreate clears the status of a kind with a status subresource:
// only /status writes it.
func (d Default) PrepareForCreate(_ context.Context, obj any) {
	if d.Status {
		ResetStatus(obj)
	}
}

// PrepareForUpdate keeps the stored status of a kind with a status
// subresource: the main resource ignores status changes.
func (d Default) PrepareForUpdate(_ context.Context, obj, old any) {
	if d.Status {
		CopyStatus(obj, old)
	}
}

// Validate checks the metadata of a new object, names being DNS subdomains
// as for most upstream kinds and for custom resources.
func (d Default) Validate(_ context.Context, obj any) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	return apivalidation.ValidateObjectMetaAccessor(m, d.Namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// ValidateUpdate accepts every update the generic metadata rules accept.
func (Default) ValidateUpdate(context.Context, any, any) field.ErrorList { return nil }

// ResetStatus sets obj's Status field to its zero value.
func ResetStatus(obj any) {
	if f := statusField(obj); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// CopyStatus sets obj's Status field to from's. Both must be of one type.
func CopyStatus(obj, from any) {
	f, src := statusField(obj), statusField(from)
	if f.IsValid() && f.CanSet() && src.IsValid() {
		f.Set(src)
	}
}

// statusField is obj's Status field: every kind with a status subresource
// has one, by the API conventions.
func statusField(obj any) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}
