package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// deleteRequest is what a delete asks of one object.
type deleteRequest struct {
	pre    *metav1.Preconditions
	grace  *int64 // DeleteOptions.gracePeriodSeconds; nil when not given
	dryRun bool
	// immediate removes the object whatever its grace period and
	// finalizers: the namespace cascade (docs/apiserver.md, "Graceful
	// deletion and finalizers").
	immediate bool
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
// store.go, updateForGracefulDeletionAndFinalizers): a kind that deletes
// gracefully (rest.GracefulDeleter) gets its grace period; an object with
// finalizers is marked with grace 0 and stays until an update removes the
// last one; a pending grace period may only be shortened.
func planDelete(ctx context.Context, res *Resource, obj any, requested *int64, now time.Time) deletion {
	m := accessor(obj)
	if requested != nil && *requested < 0 {
		// Upstream treats a negative period as 1s on the delete path.
		one := int64(1)
		requested = &one
	}
	finalizers := len(m.GetFinalizers()) > 0
	if ts := m.GetDeletionTimestamp(); ts != nil {
		cur := m.GetDeletionGracePeriodSeconds()
		if cur == nil || *cur == 0 || requested == nil || *requested >= *cur {
			if finalizers || (cur != nil && *cur > 0) {
				return deletePending
			}
			return deleteNow
		}
		// Shorten: move the deadline back by the old period and forward
		// by the new one, never into the past; a graceful request whose
		// time is already up gets the shortest graceful period, 1s.
		period := *requested
		deadline := ts.Add(-time.Duration(*cur) * time.Second).Add(time.Duration(period) * time.Second)
		if deadline.Before(now) {
			deadline = now
			if period != 0 {
				period = 1
			}
		}
		mark(m, deadline, period)
		if period == 0 && !finalizers {
			return deleteMarkThenRemove
		}
		return deleteMark
	}
	g, graceful := res.Strategy.(rest.GracefulDeleter)
	var period int64
	if graceful {
		period = g.GracePeriod(ctx, obj, requested)
	}
	if period == 0 && !finalizers && !graceful {
		return deleteNow
	}
	mark(m, now.Add(time.Duration(period)*time.Second), period)
	// Controllers act differently on an object being deleted, so its
	// generation moves, as upstream's BeforeDelete and markAsDeleting do.
	if g := m.GetGeneration(); g > 0 {
		m.SetGeneration(g + 1)
	}
	if period == 0 && !finalizers {
		return deleteMarkThenRemove
	}
	return deleteMark
}

func mark(m metav1.Object, deadline time.Time, period int64) {
	ts := metav1.NewTime(deadline.Truncate(time.Second))
	m.SetDeletionTimestamp(&ts)
	m.SetDeletionGracePeriodSeconds(&period)
}

// emptiedFinalizers is upstream's shouldDeleteDuringUpdate (store.go): an
// update that leaves no finalizer on an object marked for deletion with no
// grace period left deletes it instead of storing it.
func emptiedFinalizers(obj, old any) bool {
	m, o := accessor(obj), accessor(old)
	if len(m.GetFinalizers()) > 0 || o.GetDeletionTimestamp() == nil {
		return false
	}
	g := o.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// removeObject deletes obj, read at revision rev, from storage: the kind's
// delete hook first (a namespace's contents), then a compare-and-swap
// delete, then what the object held is given back.
func (s *Server) removeObject(ctx context.Context, res *Resource, obj any, rev int64) (any, error) {
	m := accessor(obj)
	if hook, ok := res.Strategy.(rest.DeleteHook); ok {
		if err := hook.BeforeDelete(ctx, obj); err != nil {
			return nil, err
		}
	}
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
func (s *Server) deleteObject(ctx context.Context, res *Resource, namespace, name string, req deleteRequest) (any, error) {
	hook, _ := res.Strategy.(rest.DeleteHook)
	if hook != nil {
		if err := hook.CheckDelete(name); err != nil {
			return nil, err
		}
	}
	key := storageKey(res, namespace, name)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !retryConflict(ctx, attempt) {
			return nil, storageError(res, name, ctx.Err())
		}
		kv, err := s.store.Get(ctx, key)
		if err != nil {
			return nil, storageError(res, name, err)
		}
		obj, err := decodeStored(res, kv)
		if err != nil {
			return nil, err
		}
		if err := checkPreconditions(res, obj, req.pre); err != nil {
			return nil, err
		}
		plan := deleteNow
		if !req.immediate {
			plan = planDelete(ctx, res, obj, req.grace, s.now())
		}
		switch {
		case plan == deletePending || req.dryRun:
			setTypeMeta(res, obj)
			return obj, nil
		case plan == deleteNow:
			return s.removeObject(ctx, res, obj, kv.ModRevision)
		}
		value, err := encodeForStorage(res, obj)
		if err != nil {
			return nil, err
		}
		out, err := s.store.Update(ctx, key, value, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) && req.pre == nil {
			continue
		}
		if err != nil {
			return nil, storageError(res, name, err)
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
				return obj, nil
			}
			return gone, err
		}
		setTypeMeta(res, obj)
		return obj, nil
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
