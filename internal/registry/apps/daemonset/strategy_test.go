package daemonset

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/validation"
)

func daemonSet(image string, annotations map[string]string) *dpappsv1.DaemonSet {
	ds := &dpappsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: "kube-system", Annotations: annotations}}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "dns"}}
	ds.Spec.Template.Labels = map[string]string{"app": "dns"}
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "dns", Image: image}}
	return ds
}

// TestTemplateGeneration: the template generation starts at 1, is kept on
// an update that leaves the template alone, goes up by one when the
// template changes, and is not the client's to set; and such updates pass
// upstream's update validation, which requires the increment.
func TestTemplateGeneration(t *testing.T) {
	ctx := context.Background()
	s := New(validation.Options{})
	created := daemonSet("dns:1", map[string]string{templateGenerationAnnotation: "7"})
	s.PrepareForCreate(ctx, created)
	if g := created.Annotations[templateGenerationAnnotation]; g != "7" {
		t.Errorf("create kept %q, want the client's 7 (upstream keeps a positive one)", g)
	}
	created = daemonSet("dns:1", nil)
	s.PrepareForCreate(ctx, created)
	if g := created.Annotations[templateGenerationAnnotation]; g != "1" {
		t.Fatalf("create: template generation %q, want 1", g)
	}
	if errs := rest.ValidateCreate(ctx, s, true, created); len(errs) > 0 {
		t.Fatalf("create: %v", errs)
	}

	tests := []struct {
		name   string
		image  string
		client string // the annotation the client sends
		want   string
	}{
		{"template unchanged", "dns:1", "", "1"},
		{"template changed", "dns:2", "", "2"},
		{"client sets it", "dns:2", "9", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ann map[string]string
			if tt.client != "" {
				ann = map[string]string{templateGenerationAnnotation: tt.client}
			}
			upd := daemonSet(tt.image, ann)
			upd.ResourceVersion, upd.UID = "1", created.UID
			s.PrepareForUpdate(ctx, upd, created)
			if g := upd.Annotations[templateGenerationAnnotation]; g != tt.want {
				t.Errorf("template generation %q, want %s", g, tt.want)
			}
			old := created.DeepCopy()
			old.ResourceVersion = "1"
			if errs := rest.ValidateUpdate(ctx, s, true, upd, old); len(errs) > 0 {
				t.Errorf("update refused: %v", errs)
			}
		})
	}
}
