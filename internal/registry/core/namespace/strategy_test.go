package namespace

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

type recorder struct{ deleted []string }

func (r *recorder) DeleteNamespaceContents(_ context.Context, ns string) error {
	r.deleted = append(r.deleted, ns)
	return nil
}

func TestDelete(t *testing.T) {
	rec := &recorder{}
	s := New(rec)
	for _, tt := range []struct {
		name      string
		forbidden bool
	}{{"default", true}, {"kube-system", true}, {"kube-public", true}, {"kube-node-lease", false}, {"team-a", false}} {
		err := s.CheckDelete(tt.name)
		if got := apierrors.IsForbidden(err); got != tt.forbidden {
			t.Errorf("CheckDelete(%s) = %v, want forbidden %v", tt.name, err, tt.forbidden)
		}
	}
	ns := &corev1.Namespace{}
	ns.Name = "team-a"
	if err := s.BeforeDelete(context.Background(), ns); err != nil || len(rec.deleted) != 1 || rec.deleted[0] != "team-a" {
		t.Errorf("BeforeDelete: %v, contents deleted for %v", err, rec.deleted)
	}
	if err := New(nil).BeforeDelete(context.Background(), ns); err == nil {
		t.Error("BeforeDelete without a contents deleter succeeded")
	}
}

func TestPrepareForCreate(t *testing.T) {
	for _, tt := range []struct{ sent, want corev1.NamespacePhase }{
		{"", corev1.NamespaceActive}, {corev1.NamespaceTerminating, corev1.NamespaceTerminating},
	} {
		ns := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: tt.sent}}
		New(nil).PrepareForCreate(context.Background(), ns)
		if ns.Status.Phase != tt.want {
			t.Errorf("phase %q: got %q, want %q", tt.sent, ns.Status.Phase, tt.want)
		}
	}
}
