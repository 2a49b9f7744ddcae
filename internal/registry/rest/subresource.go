package rest

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Subresource is one subresource a kind serves with behaviour of its own,
// in the shape of the extra REST storages kube-apiserver's
// pkg/registry/<group>/<kind>/storage hands its installer (pods' binding,
// eviction, exec). The generic subresources, status and scale, are not
// Subresources: the API server serves them alike for every kind whose
// api.Resources row names them. docs/architecture.md, "Adding a kind".
type Subresource struct {
	// Name is the URL segment after the object's name ("eviction").
	Name string
	// Kind is the kind discovery reports for the subresource: its body's
	// (policy/v1 Eviction) or, for a connection, its options'
	// (PodExecOptions), as kube-apiserver lists them.
	Kind schema.GroupVersionKind
	// Verbs are the verbs served, in discovery's order (sorted).
	Verbs []string
	// New returns an empty body of Kind for create and update, the Go type
	// the request body decodes into; nil when the subresource takes none.
	New func() any
	// Serve answers one request. The API server has checked the verb
	// against Verbs and decoded the body.
	Serve func(ctx context.Context, objs Objects, req Request) (Response, error)
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
