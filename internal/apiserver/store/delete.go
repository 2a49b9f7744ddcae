package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// DeleteOptions are what a delete asks of one object.
type DeleteOptions struct {
	Preconditions *metav1.Preconditions
	// GracePeriod is DeleteOptions.gracePeriodSeconds; nil when not given.
	GracePeriod *int64
	DryRun      bool
	// GC is what the delete asks of the object's dependents
	// (orphanDependents, propagationPolicy); nil asks nothing.
	GC *metav1.DeleteOptions
}

// deletion is what a delete does to an object as read.
type deletion int

const (
	deleteNow     deletion = iota // remove the key
	deleteMark                    // store the object marked for deletion
	deletePending                 // already marked: answer with it unchanged
	// deleteMarkThenRemove stores the mark (grace 0), then removes the key:
	// upstream's graceful delete whose period comes out at 0 (a pod no node
	// runs, a finished one, the kubelet's final delete) is an update before
	// the delete, so watchers see MODIFIED with deletionTimestamp, then
	// DELETED (store.go, updateForGracefulDeletionAndFinalizers).
	deleteMarkThenRemove
)

// planDelete decides what deleting obj does and, for deleteMark and
// deleteMarkThenRemove, marks obj.
// It is the generic part of upstream's BeforeDelete
// (k8s.io/apiserver/pkg/registry/rest/delete.go) and of the finalizer
// handling of its store (k8s.io/apiserver/pkg/registry/generic/registry/
// store.go, Delete and updateForGracefulDeletionAndFinalizers): a kind that
// deletes gracefully (rest.GracefulDeleter) gets its grace period, which a
// later delete may only shorten; the garbage collector's finalizers are set
// as gc and the kind's default policy ask (rest.DeletionFinalizers), except
// while a grace period is pending; an object left with finalizers is
// marked with grace 0 and stays until an update removes the last one.
func (s *Store) planDelete(ctx context.Context, obj any, requested *int64, gc *metav1.DeleteOptions, now time.Time) deletion {
	m := Accessor(obj)
	if requested != nil && *requested < 0 {
		// Upstream treats a negative period as 1s on the delete path.
		one := int64(1)
		requested = &one
	}
	setGCFinalizers := func() bool {
		changed, fins := rest.DeletionFinalizers(rest.GarbageCollectionPolicy(ctx, s.strategy), m.GetFinalizers(), gc)
		if changed {
			m.SetFinalizers(fins)
		}
		return changed
	}
	if st, ok := s.strategy.(rest.StagedDeleter); ok {
		switch st.BeginDelete(obj, gc, now) {
		case rest.DeleteMarked:
			return deleteMark
		case rest.DeleteWaits:
			return deletePending
		}
	}
	graceful := false
	var period int64
	if ts := m.GetDeletionTimestamp(); ts != nil {
		cur := m.GetDeletionGracePeriodSeconds()
		if cur == nil || *cur == 0 {
			// Marked with no grace left: only finalizers keep it, and a
			// delete may still change the garbage collector's.
			changed := setGCFinalizers()
			switch {
			case len(m.GetFinalizers()) == 0:
				return deleteNow
			case changed:
				zero := int64(0)
				m.SetDeletionGracePeriodSeconds(&zero)
				return deleteMark
			}
			return deletePending
		}
		if requested == nil || *requested >= *cur {
			return deletePending
		}
		// Shorten: move the deadline back by the old period and forward
		// by the new one, never into the past; a graceful request whose
		// time is already up gets the shortest graceful period, 1s.
		period = *requested
		deadline := ts.Add(-time.Duration(*cur) * time.Second).Add(time.Duration(period) * time.Second)
		if deadline.Before(now) {
			deadline = now
			if period != 0 {
				period = 1
			}
		}
		mark(m, deadline, period)
		graceful = true
	} else if g, ok := s.strategy.(rest.GracefulDeleter); ok {
		period = g.GracePeriod(ctx, obj, requested)
		mark(m, now.Add(time.Duration(period)*time.Second), period)
		graceful = true
		// Controllers act differently on an object being deleted, so its
		// generation moves, as upstream's BeforeDelete and markAsDeleting do.
		bumpGeneration(m)
	}
	setGCFinalizers()
	finalizers := len(m.GetFinalizers()) > 0
	switch {
	case !graceful && !finalizers:
		return deleteNow
	case !graceful:
		// upstream's markAsDeleting
		mark(m, now, 0)
		bumpGeneration(m)
		return deleteMark
	case period == 0 && !finalizers:
		return deleteMarkThenRemove
	}
	return deleteMark
}

func bumpGeneration(m metav1.Object) {
	if g := m.GetGeneration(); g > 0 {
		m.SetGeneration(g + 1)
	}
}

func mark(m metav1.Object, deadline time.Time, period int64) {
	ts := metav1.NewTime(deadline.Truncate(time.Second))
	m.SetDeletionTimestamp(&ts)
	m.SetDeletionGracePeriodSeconds(&period)
}

// emptiedFinalizers is upstream's shouldDeleteDuringUpdate (store.go): an
// update that leaves no finalizer on an object marked for deletion with no
// grace period left deletes it instead of storing it, unless the kind's
// own delete stage still keeps it (a namespace's spec.finalizers).
func (s *Store) emptiedFinalizers(obj, old any) bool {
	m, o := Accessor(obj), Accessor(old)
	if len(m.GetFinalizers()) > 0 || o.GetDeletionTimestamp() == nil {
		return false
	}
	if st, ok := s.strategy.(rest.StagedDeleter); ok && st.KeepsObject(obj) {
		return false
	}
	g := o.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// remove deletes obj, read at revision rev, from storage with a
// compare-and-swap, then gives back what the object held.
func (s *Store) remove(ctx context.Context, obj any, rev int64) (any, error) {
	m := Accessor(obj)
	gone, err := s.storage.Delete(ctx, Key(s.resource, m.GetNamespace(), m.GetName()), rev)
	if err != nil {
		return nil, Error(s.resource, m.GetName(), err)
	}
	s.release(ctx, obj)
	m.SetResourceVersion(strconv.FormatInt(gone.ModRevision, 10))
	SetTypeMeta(s.resource, obj)
	return obj, nil
}

// Delete deletes one object, or marks it for deletion (planDelete),
// with a compare-and-swap on the revision that was checked; a mark that
// lost a race with another writer is planned again on the newer object.
// removed reports that the key is gone (or would be, in a dry run), which
// decides whether the answer may be a Status (Response).
func (s *Store) Delete(ctx context.Context, namespace, name string, opts DeleteOptions) (obj any, removed bool, err error) {
	if hook, ok := s.strategy.(rest.DeleteHook); ok {
		if err := hook.CheckDelete(name); err != nil {
			return nil, false, err
		}
	}
	key := Key(s.resource, namespace, name)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !RetryConflict(ctx, attempt) {
			return nil, false, Error(s.resource, name, ctx.Err())
		}
		kv, err := s.storage.Get(ctx, key)
		if err != nil {
			return nil, false, Error(s.resource, name, err)
		}
		obj, err := Decode(s.resource, kv)
		if err != nil {
			return nil, false, err
		}
		if err := s.admit(ctx, s.admissionRequest(kadmission.Delete, "", namespace, name, nil, obj, opts.DryRun)); err != nil {
			return nil, false, err
		}
		if err := s.checkPreconditions(obj, opts.Preconditions); err != nil {
			return nil, false, err
		}
		plan := s.planDelete(ctx, obj, opts.GracePeriod, opts.GC, s.now())
		switch {
		case opts.DryRun:
			SetTypeMeta(s.resource, obj)
			return obj, plan == deleteNow || plan == deleteMarkThenRemove, nil
		case plan == deletePending:
			SetTypeMeta(s.resource, obj)
			return obj, false, nil
		case plan == deleteNow:
			gone, err := s.remove(ctx, obj, kv.ModRevision)
			if apierrors.IsConflict(err) && opts.Preconditions == nil {
				// Written to between the read and the delete (a
				// finalizer added): plan again on what is there now.
				continue
			}
			return gone, err == nil, err
		}
		value, err := Encode(s.resource, obj)
		if err != nil {
			return nil, false, err
		}
		out, err := s.storage.Update(ctx, key, value, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) && opts.Preconditions == nil {
			continue
		}
		if err != nil {
			return nil, false, Error(s.resource, name, err)
		}
		Accessor(obj).SetResourceVersion(strconv.FormatInt(out.ModRevision, 10))
		if plan == deleteMarkThenRemove {
			gone, err := s.remove(ctx, obj, out.ModRevision)
			switch {
			case apierrors.IsConflict(err) && opts.Preconditions == nil:
				// Written to in between: the next round reads it marked
				// with grace 0 and removes it, as upstream's delete retries.
				continue
			case apierrors.IsNotFound(err):
				// Someone else (a kubelet racing us) removed it: upstream
				// tolerates that here (kubernetes/kubernetes#19403).
				SetTypeMeta(s.resource, obj)
				return obj, true, nil
			}
			return gone, err == nil, err
		}
		SetTypeMeta(s.resource, obj)
		return obj, false, nil
	}
}

// Response is the body kube-apiserver answers a delete with
// (k8s.io/apiserver/pkg/registry/generic/registry/store.go, finalizeDelete):
// an object that is still stored (marked, waiting for finalizers or a
// grace period) comes back as it is; a removed one too when its kind's
// store returns deleted objects, otherwise a Status naming it, whose
// details.kind is the resource, as upstream sets it.
func (s *Store) Response(obj any, removed bool) any {
	if !removed || rest.ReturnsDeletedObject(s.strategy) {
		return obj
	}
	m := Accessor(obj)
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: m.GetName(), Group: s.resource.GVK.Group, Kind: s.resource.Plural, UID: m.GetUID()},
	}
}

// checkPreconditions is kube-apiserver's 409 for a delete whose UID or
// resourceVersion precondition the object does not meet.
func (s *Store) checkPreconditions(obj any, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	m := Accessor(obj)
	if pre.UID != nil && *pre.UID != m.GetUID() {
		//nolint:staticcheck // kube-apiserver's exact text, capital included
		return apierrors.NewConflict(s.resource.GroupResource(), m.GetName(), fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, m.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != m.GetResourceVersion() {
		//nolint:staticcheck // kube-apiserver's exact text, capital included
		return apierrors.NewConflict(s.resource.GroupResource(), m.GetName(), fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}
