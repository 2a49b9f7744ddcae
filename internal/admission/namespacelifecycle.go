package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"
)

// NamespaceGetter reads a stored namespace; a missing one is the
// namespace's 404 (apierrors.NewNotFound).
type NamespaceGetter interface {
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
}

// namespaceLifecycle is upstream's NamespaceLifecycle
// (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle) on creates:
// the object's namespace must exist (its 404) and not be terminating (a 403
// naming the object, or its generateName before a name is generated, with
// a NamespaceTerminating cause). It is not upstream's plugin because that
// one reads a namespace informer the store does not have yet (issue 32
// serves these reads from caches); its answers are upstream's.
type namespaceLifecycle struct {
	*kadmission.Handler
	namespaces NamespaceGetter
}

var _ kadmission.MutationInterface = namespaceLifecycle{}

func newNamespaceLifecycle(ns NamespaceGetter) kadmission.Interface {
	if ns == nil {
		return nil
	}
	return namespaceLifecycle{Handler: kadmission.NewHandler(kadmission.Create), namespaces: ns}
}

// Admit refuses a create in a namespace that is missing or terminating.
// Cluster-scoped objects and namespaces themselves have no namespace to
// check.
func (p namespaceLifecycle) Admit(ctx context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	ns := a.GetNamespace()
	if ns == "" || a.GetSubresource() != "" {
		return nil
	}
	stored, err := p.namespaces.GetNamespace(ctx, ns)
	if err != nil {
		return err
	}
	if stored.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	name := a.GetName()
	if name == "" {
		if m, err := meta.Accessor(a.GetObject()); err == nil {
			name = m.GetGenerateName()
		}
	}
	if name == "" {
		name = "Unknown"
	}
	forbidden := apierrors.NewForbidden(a.GetResource().GroupResource(), name, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	forbidden.ErrStatus.Details.Causes = append(forbidden.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", ns),
		Field:   "metadata.namespace",
	})
	return forbidden
}
