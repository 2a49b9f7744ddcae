package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Subresource declares one subresource of a kind: everything the API
// server, discovery, the OpenAPI documents and server-side apply know of
// it, in the shape of the extra REST storages kube-apiserver's
// pkg/registry/<group>/<kind>/storage hands its installer (pods' binding
// and eviction, namespaces' finalize, CSRs' approval). A kind's package
// declares its own (a Strategy's Subresources method); status and scale,
// which every kind whose api.Resources row names them has alike, are
// declared once, in generic.go. docs/architecture.md, "Subresources".
//
// It is served in exactly one way: Update (the parent read and written
// whole under a strategy of its own), Serve (behaviour of its own), or
// Scale (the API server's scale handler).
type Subresource struct {
	// Name is the URL segment after the object's name ("eviction").
	Name string
	// Kind is the kind discovery reports for the subresource: its body's
	// (policy/v1 Eviction) or, for a connection, its options'
	// (PodExecOptions), as kube-apiserver lists them. The zero value is
	// the parent's kind, as for the subresources served by Update.
	Kind schema.GroupVersionKind
	// Verbs are the verbs served, in discovery's order (sorted).
	Verbs []string
	// New returns an empty body of Kind for create and update, the Go type
	// the request body decodes into; nil when the subresource takes none
	// or takes the parent's.
	New func() any
	// Document is what the OpenAPI documents show of it.
	Document Document

	// Update serves a subresource that reads and writes the parent object
	// whole, as the main resource does, under rules of its own.
	Update SubresourceStrategy
	// Serve answers one request. The API server has checked the verb
	// against Verbs and decoded the body.
	Serve func(ctx context.Context, objs Objects, req Request) (Response, error)
	// Scale is true for the autoscaling/v1 Scale of the parent's
	// spec.replicas, which the API server serves with the parent's update
	// rules (generic.go's Scale).
	Scale bool

	// Alias is the name of an older resource of the parent's group and
	// version that is this subresource in all but the URL: POST
	// /api/v1/namespaces/NS/bindings is pods/binding naming the pod in the
	// body only (upstream's LegacyBindingREST). "" for none.
	Alias string
}

// Document is what the OpenAPI documents show of a subresource.
type Document int

const (
	// Undocumented subresources have no paths in the documents: the
	// connections (exec, attach, log), which kube-apiserver lists with
	// their options but no body.
	Undocumented Document = iota
	// DocumentCreate is a POST that takes and answers Kind (binding,
	// eviction, token).
	DocumentCreate
	// DocumentObject is a get, put and patch (as Verbs say) of the parent's
	// kind, as the main resource's (status, approval).
	DocumentObject
	// DocumentKind is a get, put and patch (as Verbs say) of Kind (scale).
	DocumentKind
)

// SubresourceStrategy is the strategy of a subresource that reads and
// writes its parent whole: upstream's second genericregistry.Store over the
// same objects with another update strategy (StatusREST, FinalizeREST,
// ApprovalREST). Admission of a write through it is the admission chain's
// (internal/admission), which sees the subresource's name.
type SubresourceStrategy interface {
	// PrepareForUpdate returns what the write stores, given obj as the
	// client sent it (its server metadata already old's) and old as
	// stored: obj, or a new object, keeping from old what the subresource
	// may not change, with the kind's defaults applied.
	PrepareForUpdate(ctx context.Context, obj, old any) any
	// ValidateUpdate checks obj replacing old by the subresource's rules
	// (upstream's subresource strategy's ValidateUpdate). The generic
	// metadata rules and declarative validation run beside it
	// (ValidateSubresourceUpdate).
	ValidateUpdate(ctx context.Context, obj, old any) field.ErrorList
	// ResetFields are the fields a write through the subresource cannot
	// set, so no manager owns them through it (upstream's GetResetFields).
	ResetFields() *fieldpath.Set
}

// Find returns the subresource of subs called name.
func Find(subs []Subresource, name string) (Subresource, bool) {
	for _, s := range subs {
		if s.Name == name {
			return s, true
		}
	}
	return Subresource{}, false
}

// KindOf is the kind s reports: its own, or parent's.
func (s Subresource) KindOf(parent schema.GroupVersionKind) schema.GroupVersionKind {
	if s.Kind.Empty() {
		return parent
	}
	return s.Kind
}

// Check reports a declaration the API server cannot serve: no name, no
// verbs, or not exactly one way of being served.
func (s Subresource) Check() error {
	ways := 0
	for _, set := range []bool{s.Update != nil, s.Serve != nil, s.Scale} {
		if set {
			ways++
		}
	}
	switch {
	case s.Name == "":
		return errors.New("a subresource without a name")
	case len(s.Verbs) == 0:
		return fmt.Errorf("subresource %q serves no verb", s.Name)
	case ways != 1:
		return fmt.Errorf("subresource %q must be served by exactly one of Update, Serve and Scale, not %d", s.Name, ways)
	case s.Document == DocumentCreate && (s.New == nil || s.Kind.Empty()):
		return fmt.Errorf("subresource %q is documented as a create without a kind and body", s.Name)
	case s.Document == DocumentKind && (s.New == nil || s.Kind.Empty()):
		return fmt.Errorf("subresource %q is documented with a kind of its own without one", s.Name)
	}
	return nil
}

// Request is one request to a Subresource.
type Request struct {
	// Verb is the request's verb: get, create, update, patch.
	Verb      string
	Namespace string
	Name      string
	// Body is the decoded body (a pointer of New's type) on create and
	// update, its namespace reconciled with the URL's; nil otherwise.
	Body any
	// DryRun is true for dryRun=All.
	DryRun bool
	// HTTP is the request itself, for subresources that take query
	// parameters or upgrade the connection (exec).
	HTTP *http.Request
}

// Response is a Subresource's answer: an object written with Code, or a
// Handler that writes the response itself (a proxied connection).
type Response struct {
	Code    int
	Object  any
	Handler http.Handler
}

// Objects is what a Subresource may do with the stored objects of any kind,
// through the API server's own storage paths (kube-apiserver's subresource
// storages get the same from the generic registry store and loopback
// clients). Errors are API status errors, ready to be returned.
type Objects interface {
	// Get reads one object of the resource gvr.
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (any, error)
	// List reads every object of the resource gvr in namespace.
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]any, error)
	// GuaranteedUpdate reads the object, lets tryUpdate change it, and
	// stores it with a compare-and-swap, reading it again and calling
	// tryUpdate again when another write won, as the generic registry
	// store's GuaranteedUpdate does. It does not run the kind's strategy:
	// it is for writes the subresource itself defines (a binding). An error
	// from tryUpdate ends it. A dry run stores nothing and returns the
	// object as it would have been stored.
	GuaranteedUpdate(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, dryRun bool, tryUpdate func(obj any) error) (any, error)
	// UpdateStatus writes obj's status as a /status update would, with its
	// kind's status rules, and fails with a 409 Conflict when obj's
	// resourceVersion is not the stored one.
	UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj any, dryRun bool) (any, error)
	// Delete deletes one object as a DELETE request with opts would:
	// preconditions, grace period, finalizers.
	Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts *metav1.DeleteOptions, dryRun bool) (any, error)
}
