package store

import (
	"context"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/admission"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// Storage is what the store needs of etcd; *storage.Store implements it.
type Storage interface {
	Get(ctx context.Context, key string) (storage.KV, error)
	Create(ctx context.Context, key string, value []byte) (storage.KV, error)
	Update(ctx context.Context, key string, value []byte, expectModRevision int64) (storage.KV, error)
	Delete(ctx context.Context, key string, expectModRevision int64) (storage.KV, error)
}

// Config is what a Store is made of.
type Config struct {
	// Resource is the kind's row of api.Resources.
	Resource *api.Resource
	// Strategy holds the kind's rules (internal/registry).
	Strategy rest.Strategy
	// Subresources declare the kind's subresources; those served by
	// Update are written through Store.Update with their own rules.
	Subresources []rest.Subresource
	Storage      Storage
	// Admission is the server's admission chain; nil admits everything.
	Admission *admission.Chain
	// Now is the clock of timestamps; nil is time.Now.
	Now func() time.Time
}

// Store writes the objects of one kind.
type Store struct {
	resource     *api.Resource
	strategy     rest.Strategy
	subresources []rest.Subresource
	storage      Storage
	admission    *admission.Chain
	now          func() time.Time
}

// New returns the store of cfg's kind.
func New(cfg Config) *Store {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{resource: cfg.Resource, strategy: cfg.Strategy, subresources: cfg.Subresources, storage: cfg.Storage, admission: cfg.Admission, now: cfg.Now}
}

// Get reads one object.
func (s *Store) Get(ctx context.Context, namespace, name string) (any, error) {
	kv, err := s.storage.Get(ctx, Key(s.resource, namespace, name))
	if err != nil {
		return nil, Error(s.resource, name, err)
	}
	return Decode(s.resource, kv)
}

// RetryConflict waits before attempt (1, 2, …) of a write that lost a
// compare-and-swap to another writer, with jittered exponential backoff up
// to 64 ms; false when ctx ended first.
func RetryConflict(ctx context.Context, attempt int) bool {
	if ctx.Err() != nil {
		return false
	}
	ceiling := time.Millisecond << min(attempt-1, 6)
	t := time.NewTimer(rand.N(ceiling) + 1)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// wholeObjectSubresource returns the declaration of the subresource name
// when it reads and writes the object whole under rules of its own
// (rest.Subresource.Update: status, finalize, approval).
func (s *Store) wholeObjectSubresource(name string) (rest.Subresource, bool) {
	if name == "" {
		return rest.Subresource{}, false
	}
	sub, ok := rest.Find(s.subresources, name)
	return sub, ok && sub.Update != nil
}

// admissionRequest is a write of the store's kind as the admission chain
// sees it; name is the request's (empty on a create with generateName).
func (s *Store) admissionRequest(op kadmission.Operation, subresource, namespace, name string, obj, old any, dryRun bool) admission.Request {
	return admission.Request{
		Operation: op, Kind: s.resource.GVK, Resource: s.resource.GroupVersionResource(),
		Subresource: subresource, Namespace: namespace, Name: name,
		Object: obj, OldObject: old, DryRun: dryRun,
	}
}

// admit runs the chain's mutating plugins on req.
func (s *Store) admit(ctx context.Context, req admission.Request) error {
	return s.admission.Admit(ctx, admission.Attributes(ctx, req))
}

// validate checks obj (old is nil on create) with the metadata rules and
// the kind's strategy, then runs the chain's validating plugins on req, as
// kube-apiserver's create, update and /status handlers do: an invalid
// object gets the 422, not a plugin's answer.
func (s *Store) validate(ctx context.Context, req admission.Request, obj, old any) error {
	var errs field.ErrorList
	sub, whole := s.wholeObjectSubresource(req.Subresource)
	switch {
	case old == nil:
		errs = rest.ValidateCreate(ctx, s.strategy, s.resource.Namespaced, obj)
	case whole:
		errs = rest.ValidateSubresourceUpdate(ctx, s.strategy, sub, s.resource.Namespaced, obj, old)
	default:
		errs = rest.ValidateUpdate(ctx, s.strategy, s.resource.Namespaced, obj, old)
	}
	if len(errs) > 0 {
		return Invalid(s.resource, Accessor(obj).GetName(), errs)
	}
	return s.admission.Validate(ctx, admission.Attributes(ctx, req))
}

// AdmitSubresourceCreate runs the mutating admission of a POST to a
// subresource served by its kind (serviceaccounts/token, pods/eviction,
// pods/binding), with its body as the object and the parent's name, as
// kube-apiserver admits a create on a subresource. Connections (exec,
// attach) are not writes: kube admits them as CONNECT, which no plugin
// dnsplane runs judges.
func (s *Store) AdmitSubresourceCreate(ctx context.Context, subresource, namespace, name string, body any) error {
	return s.admit(ctx, s.admissionRequest(kadmission.Create, subresource, namespace, name, body, nil, false))
}
