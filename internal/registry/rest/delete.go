package rest

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
)

// GarbageCollectionPolicy returns the default garbage collection policy of
// the kind whose strategy is s: "" when it has none (dependents are then
// deleted in the background unless a delete asks otherwise).
func GarbageCollectionPolicy(ctx context.Context, s Strategy) genericrest.GarbageCollectionPolicy {
	if g, ok := s.(genericrest.GarbageCollectionDeleteStrategy); ok {
		return g.DefaultGarbageCollectionPolicy(ctx)
	}
	return ""
}

// ReturnsDeletedObject reports whether an immediate delete of s's kind
// answers with the object rather than a Status.
func ReturnsDeletedObject(s Strategy) bool {
	r, ok := s.(genericrest.MayReturnFullObjectDeleter)
	return ok && r.DeleteReturnsDeletedObject()
}

// DeletionFinalizers returns the finalizers an object with finalizers has
// after a delete with opts, for the garbage collector: orphan when the
// delete orphans its dependents, foregroundDeletion when it deletes them
// first. In order of precedence: opts (orphanDependents, then
// propagationPolicy), the GC finalizer the object already has, the kind's
// default policy; a kind whose policy is Unsupported never gets either.
// changed reports a difference from finalizers. It is the rule of
// kube-apiserver's generic store (k8s.io/apiserver/pkg/registry/generic/
// registry/store.go, deletionFinalizersForGarbageCollection) with the
// garbage collector enabled, as kube-apiserver runs by default.
func DeletionFinalizers(policy genericrest.GarbageCollectionPolicy, finalizers []string, opts *metav1.DeleteOptions) (changed bool, out []string) {
	if policy == genericrest.Unsupported {
		return false, finalizers
	}
	orphan, foreground := gcChoice(opts)
	if orphan == nil {
		o, f := slices.Contains(finalizers, metav1.FinalizerOrphanDependents), slices.Contains(finalizers, metav1.FinalizerDeleteDependents)
		switch {
		case o:
			orphan, foreground = ptr(true), ptr(false)
		case f:
			orphan, foreground = ptr(false), ptr(true)
		default:
			orphan, foreground = ptr(policy == genericrest.OrphanDependents), ptr(false)
		}
	}
	out = make([]string, 0, len(finalizers)+1)
	for _, f := range finalizers {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if *orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if *foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if sameSet(finalizers, out) {
		return false, finalizers
	}
	return true, out
}

// gcChoice is what opts asks of dependents, nil when it asks nothing.
// The deprecated orphanDependents=false means background, as upstream
// reads it for every kind but namespaces.
func gcChoice(opts *metav1.DeleteOptions) (orphan, foreground *bool) {
	if opts == nil {
		return nil, nil
	}
	//nolint:staticcheck // SA1019: kube-apiserver still honours the deprecated field
	if o := opts.OrphanDependents; o != nil {
		return ptr(*o), ptr(false)
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationOrphan:
			return ptr(true), ptr(false)
		case metav1.DeletePropagationForeground:
			return ptr(false), ptr(true)
		case metav1.DeletePropagationBackground:
			return ptr(false), ptr(false)
		}
	}
	return nil, nil
}

func ptr(b bool) *bool { return &b }

func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}
