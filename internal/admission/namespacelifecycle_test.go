package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"
)

type phases map[string]corev1.NamespacePhase

func (p phases) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	phase, ok := p[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}, nil
}

// TestNamespaceLifecycle: creates in a missing namespace get its 404, in a
// terminating one upstream's 403 naming the object, its generateName, or
// "Unknown"; cluster-scoped objects, subresources and other operations
// pass.
func TestNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	chain := NewChain([]Plugin{{"NamespaceLifecycle", newNamespaceLifecycle(phases{"live": corev1.NamespaceActive, "dying": corev1.NamespaceTerminating})}})
	cm := func(name, generate string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: generate}}
	}
	for _, tc := range []struct {
		name, ns, reqName, subresource string
		op                             kadmission.Operation
		obj                            *corev1.ConfigMap
		want                           string // "" admits
	}{
		{name: "live", ns: "live", reqName: "a", op: kadmission.Create, obj: cm("a", "")},
		{name: "missing", ns: "gone", reqName: "a", op: kadmission.Create, obj: cm("a", ""), want: `namespaces "gone" not found`},
		{name: "terminating", ns: "dying", reqName: "a", op: kadmission.Create, obj: cm("a", ""), want: `configmaps "a" is forbidden: unable to create new content in namespace dying because it is being terminated`},
		{name: "terminating, generateName", ns: "dying", op: kadmission.Create, obj: cm("", "x-"), want: `configmaps "x-" is forbidden: unable to create new content in namespace dying because it is being terminated`},
		{name: "terminating, no name", ns: "dying", op: kadmission.Create, obj: cm("", ""), want: `configmaps "Unknown" is forbidden: unable to create new content in namespace dying because it is being terminated`},
		{name: "update in terminating", ns: "dying", reqName: "a", op: kadmission.Update, obj: cm("a", "")},
		{name: "cluster-scoped", op: kadmission.Create, obj: cm("a", "")},
		{name: "subresource", ns: "gone", reqName: "a", subresource: "status", op: kadmission.Create, obj: cm("a", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := chain.Admit(t.Context(), Attributes(t.Context(), Request{Operation: tc.op, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
				Subresource: tc.subresource, Namespace: tc.ns, Name: tc.reqName, Object: tc.obj}))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if apierrors.IsForbidden(err) && (len(apierrors.ReasonForError(err)) == 0 || err.(apierrors.APIStatus).Status().Details.Causes[0].Type != corev1.NamespaceTerminatingCause) {
				t.Errorf("403 without the NamespaceTerminating cause: %#v", err)
			}
		})
	}
}
