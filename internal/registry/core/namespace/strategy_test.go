package namespace

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

func TestCheckDelete(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		forbidden bool
	}{{"default", true}, {"kube-system", true}, {"kube-public", true}, {"kube-node-lease", false}, {"team-a", false}} {
		err := New().CheckDelete(tt.name)
		if got := apierrors.IsForbidden(err); got != tt.forbidden {
			t.Errorf("CheckDelete(%s) = %v, want forbidden %v", tt.name, err, tt.forbidden)
		}
	}
}

// TestPrepareForCreate is upstream's namespaceStrategy.PrepareForCreate:
// phase Active whatever was sent, the kubernetes finalizer added once.
func TestPrepareForCreate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sent       corev1.NamespacePhase
		finalizers []corev1.FinalizerName
		want       []corev1.FinalizerName
	}{
		{"", nil, []corev1.FinalizerName{"kubernetes"}},
		{corev1.NamespaceTerminating, nil, []corev1.FinalizerName{"kubernetes"}},
		{"", []corev1.FinalizerName{"example.com/x"}, []corev1.FinalizerName{"example.com/x", "kubernetes"}},
		{"", []corev1.FinalizerName{"kubernetes"}, []corev1.FinalizerName{"kubernetes"}},
	} {
		ns := &corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: tt.finalizers}, Status: corev1.NamespaceStatus{Phase: tt.sent}}
		ns.Name = "a"
		New().PrepareForCreate(context.Background(), ns)
		if ns.Status.Phase != corev1.NamespaceActive || !slices.Equal(ns.Spec.Finalizers, tt.want) {
			t.Errorf("sent %q %v: got %q %v, want Active %v", tt.sent, tt.finalizers, ns.Status.Phase, ns.Spec.Finalizers, tt.want)
		}
	}
}

// TestPrepareForUpdate: an update of the namespace itself changes neither
// spec.finalizers nor the status.
func TestPrepareForUpdate(t *testing.T) {
	t.Parallel()
	old := &corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	ns := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	New().PrepareForUpdate(context.Background(), ns, old)
	if !slices.Equal(ns.Spec.Finalizers, old.Spec.Finalizers) || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("update kept %v %q", ns.Spec.Finalizers, ns.Status.Phase)
	}
}

// TestBeginDelete holds the namespace delete to upstream's REST.Delete
// (pkg/registry/core/namespace/storage, and its TestDeleteNamespace*
// cases): Terminating first, then waiting on spec.finalizers, then the
// generic rules.
func TestBeginDelete(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	marked := metav1.NewTime(now.Add(-time.Minute))
	policy := func(p metav1.DeletionPropagation) *metav1.DeleteOptions {
		return &metav1.DeleteOptions{PropagationPolicy: &p}
	}
	orphanDependents := func(b bool) *metav1.DeleteOptions {
		//nolint:staticcheck // SA1019: the deprecated field is still honoured
		return &metav1.DeleteOptions{OrphanDependents: &b}
	}
	for _, tt := range []struct {
		name           string
		ns             corev1.Namespace
		opts           *metav1.DeleteOptions
		want           rest.DeleteStep
		wantFinalizers []string
	}{
		{name: "first delete", ns: corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}}, want: rest.DeleteMarked},
		{name: "first delete, orphan", opts: policy(metav1.DeletePropagationOrphan), want: rest.DeleteMarked, wantFinalizers: []string{metav1.FinalizerOrphanDependents}},
		{name: "first delete, foreground", opts: policy(metav1.DeletePropagationForeground), want: rest.DeleteMarked, wantFinalizers: []string{metav1.FinalizerDeleteDependents}},
		{name: "first delete, orphanDependents=false is foreground for namespaces", opts: orphanDependents(false), want: rest.DeleteMarked, wantFinalizers: []string{metav1.FinalizerDeleteDependents}},
		{name: "first delete, background removes orphan", ns: corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"x/y", metav1.FinalizerOrphanDependents}}}, opts: policy(metav1.DeletePropagationBackground), want: rest.DeleteMarked, wantFinalizers: []string{"x/y"}},
		{name: "terminating, spec finalizers left", ns: corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &marked}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}}, want: rest.DeleteWaits},
		{name: "terminating, spec finalizers gone", ns: corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &marked}}, want: rest.DeleteGeneric},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := tt.ns.DeepCopy()
			got := New().BeginDelete(ns, tt.opts, now)
			if got != tt.want {
				t.Fatalf("BeginDelete = %d, want %d", got, tt.want)
			}
			if got != rest.DeleteMarked {
				return
			}
			if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil || !ns.DeletionTimestamp.Time.Equal(now) || ns.DeletionGracePeriodSeconds != nil {
				t.Errorf("marked %q at %v grace %v; want Terminating at %v, no grace", ns.Status.Phase, ns.DeletionTimestamp, ns.DeletionGracePeriodSeconds, now)
			}
			if !slices.Equal(ns.Finalizers, tt.wantFinalizers) {
				t.Errorf("finalizers %v, want %v", ns.Finalizers, tt.wantFinalizers)
			}
		})
	}
}

// TestFinalize: /finalize changes spec.finalizers, keeps the status, and
// validates as upstream's finalize strategy (finalizer names must be
// qualified names).
func TestFinalize(t *testing.T) {
	t.Parallel()
	sub, ok := rest.Find(New().Subresources(), "finalize")
	if !ok || sub.Update == nil {
		t.Fatal("no finalize strategy")
	}
	if _, ok := rest.Find(New().Subresources(), "status"); ok {
		t.Error("status is not the namespace's own subresource")
	}
	st := sub.Update
	old := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	ns := old.DeepCopy()
	ns.Spec.Finalizers = nil
	ns.Status.Phase = corev1.NamespaceActive
	ns = st.PrepareForUpdate(context.Background(), ns, old).(*corev1.Namespace)
	if ns.Status.Phase != corev1.NamespaceTerminating || len(ns.Spec.Finalizers) != 0 {
		t.Errorf("finalize stored %q %v", ns.Status.Phase, ns.Spec.Finalizers)
	}
	if errs := st.ValidateUpdate(context.Background(), ns, old); len(errs) != 0 {
		t.Errorf("valid finalize refused: %v", errs)
	}
	bad := old.DeepCopy()
	bad.Spec.Finalizers = []corev1.FinalizerName{"not a name"}
	if errs := st.ValidateUpdate(context.Background(), bad, old); len(errs) == 0 || errs[0].Field != "spec.finalizers[0]" {
		t.Errorf("invalid finalizer: %v", errs)
	}
	if !New().KeepsObject(old) || New().KeepsObject(ns) {
		t.Error("KeepsObject does not follow spec.finalizers")
	}
}
