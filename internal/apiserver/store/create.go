package store

import (
	"bytes"
	"context"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/storage/names"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// CreateOptions are a create's choices.
type CreateOptions struct {
	DryRun bool
	// Fields records obj's managed fields, or refuses it, at their step of
	// the create; nil when the caller computed them (server-side apply).
	Fields func(obj any) error
}

// Create stores obj, a new object, in the order the package documents.
func (s *Store) Create(ctx context.Context, obj any, opts CreateOptions) (any, error) {
	m := Accessor(obj)
	if s.resource.Namespaced && m.GetNamespace() == "" {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	req := s.admissionRequest(kadmission.Create, "", m.GetNamespace(), m.GetName(), obj, nil, opts.DryRun)
	generated := ""
	if m.GetName() == "" && m.GetGenerateName() != "" {
		generated = names.SimpleNameGenerator.GenerateName(m.GetGenerateName())
		m.SetName(generated)
	}
	initMetadata(obj, s.now())
	s.initGeneration(obj)
	s.strategy.PrepareForCreate(ctx, obj)
	if opts.Fields != nil {
		if err := opts.Fields(obj); err != nil {
			return nil, err
		}
	}
	// After the managed fields, as kube-apiserver admits: what admission
	// adds is owned by no manager.
	// Mutating admission sees the name the request gave, as in
	// kube-apiserver, where the name is generated after it (BeforeCreate):
	// upstream's NamespaceLifecycle names the generateName in its refusal.
	// The strategy's defaults above already had it (a Job's labels).
	if generated != "" {
		m.SetName("")
	}
	err := s.admit(ctx, req)
	if generated != "" && m.GetName() == "" {
		m.SetName(generated)
	}
	if err != nil {
		return nil, err
	}
	if err := s.validate(ctx, req, obj, nil); err != nil {
		return nil, err
	}
	return s.persist(ctx, obj, nil, opts.DryRun)
}

// Ensure creates obj unless an object of its name exists, with the
// server's metadata and the kind's defaults but without admission or
// validation: the objects a new cluster has from the start
// (internal/controlplane's bootstrap). Losing a race to another API server
// that created it first is success.
func (s *Store) Ensure(ctx context.Context, obj any) error {
	m := Accessor(obj)
	key := Key(s.resource, m.GetNamespace(), m.GetName())
	if _, err := s.storage.Get(ctx, key); err == nil {
		return nil
	}
	SetTypeMeta(s.resource, obj)
	initMetadata(obj, s.now())
	s.initGeneration(obj)
	s.strategy.PrepareForCreate(ctx, obj)
	if _, err := s.persist(ctx, obj, nil, false); err != nil {
		// Another API server may have created it (and taken its cluster
		// IP) first; that is success.
		if _, getErr := s.storage.Get(ctx, key); getErr == nil {
			return nil
		}
		return err
	}
	return nil
}

// persist reserves what obj needs, then creates (old == nil) or
// compare-and-swaps it over old; on failure the reservation is returned.
func (s *Store) persist(ctx context.Context, obj, old any, dryRun bool) (any, error) {
	m := Accessor(obj)
	undo, err := s.reserve(ctx, obj, old, dryRun)
	if err != nil {
		return nil, err
	}
	key := Key(s.resource, m.GetNamespace(), m.GetName())
	if dryRun {
		if old == nil {
			if _, err := s.storage.Get(ctx, key); err == nil {
				return nil, apierrors.NewAlreadyExists(s.resource.GroupResource(), m.GetName())
			}
		}
		SetTypeMeta(s.resource, obj)
		return obj, nil
	}
	value, err := Encode(s.resource, obj)
	if err != nil {
		undo()
		return nil, err
	}
	if old != nil {
		// An update that changes nothing is not written, as upstream: the
		// resourceVersion stays and watchers see no event.
		if prev, err := Encode(s.resource, old); err == nil && bytes.Equal(prev, value) {
			undo()
			m.SetResourceVersion(Accessor(old).GetResourceVersion())
			SetTypeMeta(s.resource, obj)
			return obj, nil
		}
	}
	var kv storage.KV
	if old == nil {
		kv, err = s.storage.Create(ctx, key, value)
	} else {
		rev, _ := strconv.ParseInt(Accessor(old).GetResourceVersion(), 10, 64)
		kv, err = s.storage.Update(ctx, key, value, rev)
	}
	if err != nil {
		undo()
		return nil, Error(s.resource, m.GetName(), err)
	}
	if r, ok := s.strategy.(rest.UpdateReleaser); ok && old != nil {
		r.ReleaseUpdated(ctx, obj, old)
	}
	m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	SetTypeMeta(s.resource, obj)
	return obj, nil
}

// reserve takes what an object holds outside its own key (Service cluster
// IPs) and returns how to give it back if the write fails.
func (s *Store) reserve(ctx context.Context, obj, old any, dryRun bool) (undo func(), err error) {
	if r, ok := s.strategy.(rest.Reserver); ok {
		return r.Reserve(ctx, obj, old, dryRun)
	}
	return func() {}, nil
}

// release gives back what a deleted object held.
func (s *Store) release(ctx context.Context, obj any) {
	if r, ok := s.strategy.(rest.Reserver); ok {
		r.Release(ctx, obj)
	}
}

// initMetadata sets what the server owns on create.
func initMetadata(obj any, now time.Time) {
	m := Accessor(obj)
	m.SetUID(types.UID(uuid.NewUUID()))
	m.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	// initGeneration sets it for the kinds that keep one.
	m.SetGeneration(0)
}

// initGeneration starts a new object's generation at 1 when its kind keeps
// one (rest.Generational); other kinds have none.
func (s *Store) initGeneration(obj any) {
	g := int64(0)
	if _, ok := s.strategy.(rest.Generational); ok {
		g = 1
	}
	Accessor(obj).SetGeneration(g)
}

// nextGeneration moves the generation of obj, an update of the main
// resource over old, by its kind's rule; obj holds old's generation.
func (s *Store) nextGeneration(obj, old any) {
	if g, ok := s.strategy.(rest.Generational); ok && g.GenerationChanged(obj, old) {
		Accessor(obj).SetGeneration(Accessor(old).GetGeneration() + 1)
	}
}
