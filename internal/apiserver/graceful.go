package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// deleteRequest is what a delete asks of one object.
type deleteRequest struct {
	pre    *metav1.Preconditions
	grace  *int64 // DeleteOptions.gracePeriodSeconds; nil when not given
	dryRun bool
	// gc is what the delete asks of the object's dependents
	// (orphanDependents, propagationPolicy); nil asks nothing.
	gc *metav1.DeleteOptions
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
func planDelete(ctx context.Context, res *Resource, obj any, requested *int64, gc *metav1.DeleteOptions, now time.Time) deletion {
	m := accessor(obj)
	if requested != nil && *requested < 0 {
		// Upstream treats a negative period as 1s on the delete path.
		one := int64(1)
		requested = &one
	}
	setGCFinalizers := func() bool {
		changed, fins := rest.DeletionFinalizers(rest.GarbageCollectionPolicy(ctx, res.Strategy), m.GetFinalizers(), gc)
		if changed {
			m.SetFinalizers(fins)
		}
		return changed
	}
	if st, ok := res.Strategy.(rest.StagedDeleter); ok {
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
	} else if g, ok := res.Strategy.(rest.GracefulDeleter); ok {
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
func emptiedFinalizers(res *Resource, obj, old any) bool {
	m, o := accessor(obj), accessor(old)
	if len(m.GetFinalizers()) > 0 || o.GetDeletionTimestamp() == nil {
		return false
	}
	if st, ok := res.Strategy.(rest.StagedDeleter); ok && st.KeepsObject(obj) {
		return false
	}
	g := o.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// removeObject deletes obj, read at revision rev, from storage with a
// compare-and-swap, then gives back what the object held.
func (s *Server) removeObject(ctx context.Context, res *Resource, obj any, rev int64) (any, error) {
	m := accessor(obj)
	gone, err := s.store.Delete(ctx, storageKey(res, m.GetNamespace(), m.GetName()), rev)
	if err != nil {
		return nil, storageError(res, m.GetName(), err)
	}
	release(ctx, res, obj)
	m.SetResourceVersion(strconv.FormatInt(gone.ModRevision, 10))
	setTypeMeta(res, obj)
	return obj, nil
}

// deleteObject deletes one object, or marks it for deletion (planDelete),
// with a compare-and-swap on the revision that was checked; a mark that
// lost a race with another writer is planned again on the newer object.
// removed reports that the key is gone (or would be, in a dry run), which
// decides whether the answer may be a Status (deleteResponse).
func (s *Server) deleteObject(ctx context.Context, res *Resource, namespace, name string, req deleteRequest) (obj any, removed bool, err error) {
	if hook, ok := res.Strategy.(rest.DeleteHook); ok {
		if err := hook.CheckDelete(name); err != nil {
			return nil, false, err
		}
	}
	key := storageKey(res, namespace, name)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !retryConflict(ctx, attempt) {
			return nil, false, storageError(res, name, ctx.Err())
		}
		kv, err := s.store.Get(ctx, key)
		if err != nil {
			return nil, false, storageError(res, name, err)
		}
		obj, err := decodeStored(res, kv)
		if err != nil {
			return nil, false, err
		}
		if err := s.admit(ctx, admissionRequest(res, admission.Delete, "", namespace, name, nil, obj, req.dryRun)); err != nil {
			return nil, false, err
		}
		if err := checkPreconditions(res, obj, req.pre); err != nil {
			return nil, false, err
		}
		plan := planDelete(ctx, res, obj, req.grace, req.gc, s.now())
		switch {
		case req.dryRun:
			setTypeMeta(res, obj)
			return obj, plan == deleteNow || plan == deleteMarkThenRemove, nil
		case plan == deletePending:
			setTypeMeta(res, obj)
			return obj, false, nil
		case plan == deleteNow:
			gone, err := s.removeObject(ctx, res, obj, kv.ModRevision)
			if apierrors.IsConflict(err) && req.pre == nil {
				// Written to between the read and the delete (a
				// finalizer added): plan again on what is there now.
				continue
			}
			return gone, err == nil, err
		}
		value, err := encodeForStorage(res, obj)
		if err != nil {
			return nil, false, err
		}
		out, err := s.store.Update(ctx, key, value, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) && req.pre == nil {
			continue
		}
		if err != nil {
			return nil, false, storageError(res, name, err)
		}
		accessor(obj).SetResourceVersion(strconv.FormatInt(out.ModRevision, 10))
		if plan == deleteMarkThenRemove {
			gone, err := s.removeObject(ctx, res, obj, out.ModRevision)
			switch {
			case apierrors.IsConflict(err) && req.pre == nil:
				// Written to in between: the next round reads it marked
				// with grace 0 and removes it, as upstream's delete retries.
				continue
			case apierrors.IsNotFound(err):
				// Someone else (a kubelet racing us) removed it: upstream
				// tolerates that here (kubernetes/kubernetes#19403).
				setTypeMeta(res, obj)
				return obj, true, nil
			}
			return gone, err == nil, err
		}
		setTypeMeta(res, obj)
		return obj, false, nil
	}
}

// deleteResponse is the body kube-apiserver answers a delete with
// (k8s.io/apiserver/pkg/registry/generic/registry/store.go, finalizeDelete):
// an object that is still stored (marked, waiting for finalizers or a
// grace period) comes back as it is; a removed one too when its kind's
// store returns deleted objects, otherwise a Status naming it, whose
// details.kind is the resource, as upstream sets it.
func deleteResponse(res *Resource, obj any, removed bool) any {
	if !removed || rest.ReturnsDeletedObject(res.Strategy) {
		return obj
	}
	m := accessor(obj)
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: m.GetName(), Group: res.GVK.Group, Kind: res.Plural, UID: m.GetUID()},
	}
}

// checkPreconditions is kube-apiserver's 409 for a delete whose UID or
// resourceVersion precondition the object does not meet.
func checkPreconditions(res *Resource, obj any, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	m := accessor(obj)
	if pre.UID != nil && *pre.UID != m.GetUID() {
		//nolint:staticcheck // kube-apiserver's exact text, capital included
		return apierrors.NewConflict(res.GroupResource(), m.GetName(), fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, m.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != m.GetResourceVersion() {
		//nolint:staticcheck // kube-apiserver's exact text, capital included
		return apierrors.NewConflict(res.GroupResource(), m.GetName(), fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}
