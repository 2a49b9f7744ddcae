package apiserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// revision is the store's current revision, as a list's resourceVersion
// reports it: a refused request must not move it.
func revision(t *testing.T, ts *testServer, ns string) string {
	t.Helper()
	l, err := ts.client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.ResourceVersion
}

// apiStatusOf returns the HTTP code and message of an API error.
func apiStatusOf(err error) (int32, string) {
	var se apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		se = s
	} else {
		return 0, ""
	}
	return se.Status().Code, se.Status().Message
}

// boundPod creates a pod already assigned to a node.
func boundPod(t *testing.T, ts *testServer, ns, name string, grace *int64) *corev1.Pod {
	t.Helper()
	p := pod(name)
	p.Spec.NodeName = "n1"
	p.Spec.TerminationGracePeriodSeconds = grace
	out, err := ts.client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGracefulPodDeletion(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)

	boundPod(t, ts, ns, "bound", nil)
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=bound"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := pods.Get(ctx, "bound", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("a bound pod went at once: %v", err)
	}
	if got.DeletionTimestamp == nil || ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 30 {
		t.Fatalf("marked %v grace %v, want a deadline and 30s", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
	}
	if d := time.Until(got.DeletionTimestamp.Time); d < 25*time.Second || d > 31*time.Second {
		t.Errorf("deadline in %v, want about 30s", d)
	}
	// Shorter shortens; longer changes nothing.
	if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](10)}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](60)}); err != nil {
		t.Fatal(err)
	}
	got, _ = pods.Get(ctx, "bound", metav1.GetOptions{})
	if ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 10 {
		t.Errorf("grace %v, want 10", got.DeletionGracePeriodSeconds)
	}
	// The node's agent finishes with grace 0.
	if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "bound", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after grace 0: %v", err)
	}
	// Marked (30s), shortened (10s), then, as upstream's store does for a
	// delete whose grace comes out at 0, marked with 0 and removed.
	var types []watch.EventType
	var graces []int64
	timeout := time.After(10 * time.Second)
	for len(types) < 5 {
		select {
		case e := <-w.ResultChan():
			types = append(types, e.Type)
			if p, ok := e.Object.(*corev1.Pod); ok {
				graces = append(graces, ptr.Deref(p.DeletionGracePeriodSeconds, -1))
			}
		case <-timeout:
			t.Fatalf("watch saw %v", types)
		}
	}
	if want := []watch.EventType{watch.Added, watch.Modified, watch.Modified, watch.Modified, watch.Deleted}; !equalTypes(types, want) {
		t.Errorf("watch saw %v, want %v", types, want)
	}
	if want := []int64{-1, 30, 10, 0, 0}; fmt.Sprint(graces) != fmt.Sprint(want) {
		t.Errorf("watch saw deletionGracePeriodSeconds %v, want %v (-1: unset)", graces, want)
	}

	for _, tc := range []struct {
		name   string
		grace  *int64 // spec.terminationGracePeriodSeconds
		bound  bool
		opts   metav1.DeleteOptions
		remain bool
		period int64
	}{
		{"unbound goes at once", nil, false, metav1.DeleteOptions{}, false, 0},
		{"pod's own period", ptr.To[int64](5), true, metav1.DeleteOptions{}, true, 5},
		{"request's period", ptr.To[int64](5), true, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](2)}, true, 2},
		{"negative is 1s", nil, true, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](-3)}, true, 1},
		{"grace 0 forces", nil, true, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(strings.ToLower(tc.name), " ", "-")
			name = strings.ReplaceAll(name, "'", "")
			if tc.bound {
				boundPod(t, ts, ns, name, tc.grace)
			} else if _, err := pods.Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := pods.Delete(ctx, name, tc.opts); err != nil {
				t.Fatal(err)
			}
			got, err := pods.Get(ctx, name, metav1.GetOptions{})
			if !tc.remain {
				if !apierrors.IsNotFound(err) {
					t.Errorf("pod remains: %v", err)
				}
				return
			}
			if err != nil || ptr.Deref(got.DeletionGracePeriodSeconds, -1) != tc.period {
				t.Errorf("got %v, %v; want grace %d", got.DeletionGracePeriodSeconds, err, tc.period)
			}
		})
	}
}

func equalTypes(a, b []watch.EventType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFinalizersBlockDeletion(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	cms := ts.client.CoreV1().ConfigMaps(ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil || ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 0 {
		t.Fatalf("got %+v, %v; want it marked with grace 0", got, err)
	}
	// A second delete changes nothing while the finalizer is there.
	before := revision(t, ts, ns)
	if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := revision(t, ts, ns); after != before {
		t.Errorf("second delete moved the revision %s → %s", before, after)
	}
	// No new finalizer once deletion started (apimachinery's
	// ValidateObjectMetaUpdate).
	got.Finalizers = append(got.Finalizers, "example.com/more")
	_, err = cms.Update(ctx, got, metav1.UpdateOptions{})
	code, msg := apiStatusOf(err)
	if code != 422 || !strings.Contains(msg, `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}`) {
		t.Errorf("adding a finalizer: %d %s", code, msg)
	}
	if after := revision(t, ts, ns); after != before {
		t.Errorf("refused update moved the revision %s → %s", before, after)
	}
	// Removing the last finalizer deletes it.
	got, _ = cms.Get(ctx, "held", metav1.GetOptions{})
	got.Finalizers = nil
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "held", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the last finalizer: %v", err)
	}

	// A bound pod with a finalizer: grace 0 marks it, the finalizer keeps
	// it; removing the finalizer (by patch) then deletes it.
	pods := ts.client.CoreV1().Pods(ns)
	p := pod("fin")
	p.Spec.NodeName = "n1"
	p.Finalizers = []string{"example.com/hold"}
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "fin", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "fin", metav1.GetOptions{}); err != nil {
		t.Fatalf("finalizer did not hold the pod: %v", err)
	}
	if _, err := pods.Patch(ctx, "fin", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "fin", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the patch: %v", err)
	}
}
