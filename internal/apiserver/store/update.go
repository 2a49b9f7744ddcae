package store

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kadmission "k8s.io/apiserver/pkg/admission"
)

// UpdateOptions are an update's choices.
type UpdateOptions struct {
	// Subresource is the subresource written ("" for the main resource):
	// one that writes the object whole under rules of its own (status,
	// finalize, approval), or scale, which writes it by the main
	// resource's.
	Subresource string
	DryRun      bool
	// Fields records obj's managed fields over old's, or refuses obj, at
	// their step of the update; nil when the caller computed them
	// (server-side apply).
	Fields func(obj, old any) error
}

// UpdateCurrent stores obj over the current object of its name. A
// resourceVersion in obj is a precondition (409 when stale); without one
// the update applies to whatever is current, as upstream allows for
// built-in kinds.
func (s *Store) UpdateCurrent(ctx context.Context, namespace, name string, obj any, opts UpdateOptions) (any, error) {
	want, err := parseResourceVersion(Accessor(obj).GetResourceVersion())
	if err != nil {
		return nil, err
	}
	kv, err := s.storage.Get(ctx, Key(s.resource, namespace, name))
	if err != nil {
		return nil, Error(s.resource, name, err)
	}
	if want != 0 && want != kv.ModRevision {
		return nil, Conflict(s.resource.GroupResource(), name)
	}
	old, err := Decode(s.resource, kv)
	if err != nil {
		return nil, err
	}
	return s.Update(ctx, obj, old, opts)
}

// Update stores obj over old, the current object as read, in the order the
// package documents.
func (s *Store) Update(ctx context.Context, obj, old any, opts UpdateOptions) (any, error) {
	sub, whole := s.wholeObjectSubresource(opts.Subresource)
	managed := Accessor(obj).GetManagedFields()
	keepServerMetadata(obj, old)
	if whole {
		// The subresource keeps what it may not change; /scale writes
		// the parent through the main resource's rules.
		obj = sub.Update.PrepareForUpdate(ctx, obj, old)
		if opts.Fields == nil {
			Accessor(obj).SetManagedFields(managed)
		}
	} else {
		s.strategy.PrepareForUpdate(ctx, obj, old)
	}
	if opts.Fields != nil {
		if err := opts.Fields(obj, old); err != nil {
			return nil, err
		}
	}
	// After the managed fields, as on create. Admission sees the object
	// the strategy prepared: what it kept of old (a /status write's
	// labels and spec) cannot be a change a plugin refuses.
	m := Accessor(obj)
	req := s.admissionRequest(kadmission.Update, opts.Subresource, m.GetNamespace(), m.GetName(), obj, old, opts.DryRun)
	if err := s.admit(ctx, req); err != nil {
		return nil, err
	}
	if !whole {
		// The kind's rule, what admission changed included.
		s.nextGeneration(obj, old)
	}
	m.SetResourceVersion(Accessor(old).GetResourceVersion())
	if err := s.validate(ctx, req, obj, old); err != nil {
		return nil, err
	}
	if s.emptiedFinalizers(obj, old) && !opts.DryRun {
		// The last finalizer of an object being deleted is gone: the
		// update deletes it (delete.go).
		rev, _ := strconv.ParseInt(Accessor(old).GetResourceVersion(), 10, 64)
		return s.remove(ctx, obj, rev)
	}
	return s.persist(ctx, obj, old, opts.DryRun)
}

// keepServerMetadata copies what a client may not change on update.
func keepServerMetadata(obj, old any) {
	m, o := Accessor(obj), Accessor(old)
	m.SetUID(o.GetUID())
	m.SetCreationTimestamp(o.GetCreationTimestamp())
	m.SetDeletionTimestamp(o.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(o.GetDeletionGracePeriodSeconds())
	m.SetGeneration(o.GetGeneration())
	if m.GetManagedFields() == nil {
		m.SetManagedFields(o.GetManagedFields())
	}
}

// parseResourceVersion parses the metadata.resourceVersion of a request
// body.
func parseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
	}
	return n, nil
}
