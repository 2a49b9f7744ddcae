package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/registry"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// TestPlanDelete holds planDelete to upstream's BeforeDelete and store
// Delete: which deletes write a mark (a MODIFIED watchers see) and which
// remove the key, and with what grace.
func TestPlanDelete(t *testing.T) {
	t.Parallel()
	pods, cms := coreStore(t, "pods"), coreStore(t, "configmaps")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	decode := func(st *Store, v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := Decode(st.resource, storage.KV{Key: "k", Value: b, ModRevision: 5})
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	podWith := func(node string, phase corev1.PodPhase, markedGrace *int64, finalizers ...string) any {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Finalizers: finalizers},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
		if markedGrace != nil {
			ts := metav1.NewTime(now.Add(time.Duration(*markedGrace) * time.Second))
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, markedGrace
		}
		return decode(pods, p)
	}
	for _, tc := range []struct {
		name      string
		res       *Store
		obj       any
		requested *int64
		want      deletion
		wantGrace *int64 // deletionGracePeriodSeconds after planning
	}{
		{"kind without grace goes at once", cms, decode(cms, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}), nil, deleteNow, nil},
		{"kind without grace, finalizers", cms, decode(cms, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Finalizers: []string{"x/y"}}}), nil, deleteMark, ptr.To[int64](0)},
		{"pod without node: marked 0, removed", pods, podWith("", corev1.PodPending, nil), nil, deleteMarkThenRemove, ptr.To[int64](0)},
		{"finished pod: marked 0, removed", pods, podWith("n", corev1.PodSucceeded, nil), ptr.To[int64](30), deleteMarkThenRemove, ptr.To[int64](0)},
		{"bound pod: marked 30", pods, podWith("n", corev1.PodRunning, nil), nil, deleteMark, ptr.To[int64](30)},
		{"bound pod, grace 0: marked 0, removed", pods, podWith("n", corev1.PodRunning, nil), ptr.To[int64](0), deleteMarkThenRemove, ptr.To[int64](0)},
		{"marked pod, shorter", pods, podWith("n", corev1.PodRunning, ptr.To[int64](30)), ptr.To[int64](10), deleteMark, ptr.To[int64](10)},
		{"marked pod, kubelet's final delete", pods, podWith("n", corev1.PodRunning, ptr.To[int64](30)), ptr.To[int64](0), deleteMarkThenRemove, ptr.To[int64](0)},
		{"marked pod, longer", pods, podWith("n", corev1.PodRunning, ptr.To[int64](30)), ptr.To[int64](60), deletePending, ptr.To[int64](30)},
		{"marked with grace 0: removed", pods, podWith("n", corev1.PodRunning, ptr.To[int64](0)), nil, deleteNow, ptr.To[int64](0)},
		{"pod without node, finalizers: stays", pods, podWith("", corev1.PodPending, nil, "x/y"), nil, deleteMark, ptr.To[int64](0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.res.planDelete(context.Background(), tc.obj, tc.requested, nil, now); got != tc.want {
				t.Errorf("plan %d, want %d", got, tc.want)
			}
			m := Accessor(tc.obj)
			if g := m.GetDeletionGracePeriodSeconds(); (g == nil) != (tc.wantGrace == nil) || (g != nil && *g != *tc.wantGrace) {
				t.Errorf("deletionGracePeriodSeconds %v, want %v", ptr.Deref(g, -1), ptr.Deref(tc.wantGrace, -1))
			}
			if tc.wantGrace != nil && m.GetDeletionTimestamp() == nil {
				t.Error("no deletionTimestamp")
			}
		})
	}
}

// TestPlanDeleteGarbageCollection: what the garbage collector's finalizers
// do to a delete's plan (store.go's Delete with
// deletionFinalizersForGarbageCollection): a new one keeps the object,
// marked; one a delete takes away lets it go; a change while it waits is
// written, no change is not.
func TestPlanDeleteGarbageCollection(t *testing.T) {
	t.Parallel()
	cms := coreStore(t, "configmaps")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	policy := func(p metav1.DeletionPropagation) *metav1.DeleteOptions {
		return &metav1.DeleteOptions{PropagationPolicy: &p}
	}
	cm := func(marked bool, finalizers ...string) any {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Finalizers: finalizers}}
		if marked {
			ts := metav1.NewTime(now.Add(-time.Minute))
			c.DeletionTimestamp, c.DeletionGracePeriodSeconds = &ts, ptr.To[int64](0)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		obj  any
		gc   *metav1.DeleteOptions
		want deletion
	}{
		{"orphan: marked", cm(false), policy(metav1.DeletePropagationOrphan), deleteMark},
		{"foreground: marked", cm(false), policy(metav1.DeletePropagationForeground), deleteMark},
		{"background: removed", cm(false), policy(metav1.DeletePropagationBackground), deleteNow},
		{"background takes the orphan finalizer away: removed", cm(false, metav1.FinalizerOrphanDependents), policy(metav1.DeletePropagationBackground), deleteNow},
		{"waiting, switched to foreground: written", cm(true, metav1.FinalizerOrphanDependents), policy(metav1.DeletePropagationForeground), deleteMark},
		{"waiting, same policy: unchanged", cm(true, metav1.FinalizerOrphanDependents), policy(metav1.DeletePropagationOrphan), deletePending},
		{"waiting, background, nothing else holds it: removed", cm(true, metav1.FinalizerOrphanDependents), policy(metav1.DeletePropagationBackground), deleteNow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := cms.planDelete(context.Background(), tc.obj, nil, tc.gc, now); got != tc.want {
				t.Errorf("plan %d, want %d", got, tc.want)
			}
		})
	}
}

// coreStore is the store of the core kind plural, with offline strategies
// and no storage: enough to plan deletes.
func coreStore(t testing.TB, plural string) *Store {
	t.Helper()
	strategies := registry.Strategies(registry.Config{})
	for _, r := range api.Resources() {
		if r.GVK.Group == "" && r.Plural == plural {
			return New(Config{Resource: &r, Strategy: strategies[r.GVK.GroupKind()]})
		}
	}
	t.Fatalf("no %s", plural)
	return nil
}

// FuzzPlanDelete: whatever delete options the handlers accept, the plan
// is one of the four and never a panic, for a kind with finalizers.
func FuzzPlanDelete(f *testing.F) {
	f.Add(int64(0), "Orphan", false, false)
	f.Add(int64(-1), "Foreground", true, true)
	f.Add(int64(30), "", true, false)
	cms := coreStore(f, "configmaps")
	f.Fuzz(func(t *testing.T, grace int64, propagation string, setOrphan, orphan bool) {
		opts := &metav1.DeleteOptions{GracePeriodSeconds: &grace}
		if propagation != "" {
			p := metav1.DeletionPropagation(propagation)
			opts.PropagationPolicy = &p
		}
		if setOrphan {
			opts.OrphanDependents = &orphan //nolint:staticcheck // SA1019: the deprecated field is still honoured
		}
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Finalizers: []string{metav1.FinalizerOrphanDependents}}}
		if got := cms.planDelete(context.Background(), obj, opts.GracePeriodSeconds, opts, time.Unix(0, 0)); got < deleteNow || got > deleteMarkThenRemove {
			t.Fatalf("plan %d", got)
		}
	})
}
