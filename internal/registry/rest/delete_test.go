package rest

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
)

// TestDeletionFinalizers holds the rule to kube-apiserver's
// (deletionFinalizersForGarbageCollection and its store tests,
// TestStoreDeleteWithOrphanDependents and
// TestStoreDeletionPropagation): options first, then the finalizer the
// object has, then the kind's default.
func TestDeletionFinalizers(t *testing.T) {
	t.Parallel()
	const (
		orphan = metav1.FinalizerOrphanDependents
		fg     = metav1.FinalizerDeleteDependents
	)
	policy := func(p metav1.DeletionPropagation) *metav1.DeleteOptions {
		return &metav1.DeleteOptions{PropagationPolicy: &p}
	}
	orphanDependents := func(b bool) *metav1.DeleteOptions {
		//nolint:staticcheck // SA1019: the deprecated field is still honoured
		return &metav1.DeleteOptions{OrphanDependents: &b}
	}
	for _, tt := range []struct {
		name    string
		policy  genericrest.GarbageCollectionPolicy
		have    []string
		opts    *metav1.DeleteOptions
		want    []string
		changed bool
	}{
		{name: "no options, no default", want: nil},
		{name: "no options, DeleteDependents default", policy: genericrest.DeleteDependents},
		{name: "no options, OrphanDependents default (batch/v1 Job, v1 RC)", policy: genericrest.OrphanDependents, want: []string{orphan}, changed: true},
		{name: "Orphan", opts: policy(metav1.DeletePropagationOrphan), want: []string{orphan}, changed: true},
		{name: "Foreground", opts: policy(metav1.DeletePropagationForeground), want: []string{fg}, changed: true},
		{name: "Background", opts: policy(metav1.DeletePropagationBackground)},
		{name: "Background over an OrphanDependents default", policy: genericrest.OrphanDependents, opts: policy(metav1.DeletePropagationBackground)},
		{name: "Background removes orphan", have: []string{"a", orphan}, opts: policy(metav1.DeletePropagationBackground), want: []string{"a"}, changed: true},
		{name: "Orphan replaces foreground", have: []string{fg, "a"}, opts: policy(metav1.DeletePropagationOrphan), want: []string{"a", orphan}, changed: true},
		{name: "kept finalizer wins over the default", policy: genericrest.OrphanDependents, have: []string{fg}, want: []string{fg}},
		{name: "orphanDependents=true", opts: orphanDependents(true), want: []string{orphan}, changed: true},
		{name: "orphanDependents=false is background", policy: genericrest.OrphanDependents, have: []string{fg}, opts: orphanDependents(false), want: []string{}, changed: true},
		{name: "Unsupported (Events) never", policy: genericrest.Unsupported, opts: policy(metav1.DeletePropagationOrphan)},
		{name: "Unsupported keeps what is there", policy: genericrest.Unsupported, have: []string{orphan}, opts: policy(metav1.DeletePropagationBackground), want: []string{orphan}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			changed, got := DeletionFinalizers(tt.policy, tt.have, tt.opts)
			if changed != tt.changed || !slices.Equal(got, tt.want) && (len(got) != 0 || len(tt.want) != 0) {
				t.Errorf("DeletionFinalizers(%q, %v) = %v, %v; want %v, %v", tt.policy, tt.have, changed, got, tt.changed, tt.want)
			}
		})
	}
}

func TestDefaultDeleteBehaviour(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if ReturnsDeletedObject(Default{}) || GarbageCollectionPolicy(ctx, Default{}) != "" {
		t.Error("the zero Default returns the object or has a policy")
	}
	d := Default{ReturnDeletedObject: true, GarbageCollection: genericrest.OrphanDependents}
	if !ReturnsDeletedObject(d) || GarbageCollectionPolicy(ctx, d) != genericrest.OrphanDependents {
		t.Error("Default's fields are not reported")
	}
}
