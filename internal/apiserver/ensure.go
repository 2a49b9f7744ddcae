package apiserver

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// EnsureObject creates obj unless an object of its kind, namespace and name
// exists, through the same defaulting and storage path as a create request
// but without authentication or admission. It is for the objects a new
// cluster has from the start (internal/controlplane's bootstrap); losing a
// race to another API server that created it first is success.
func (s *Server) EnsureObject(ctx context.Context, obj runtime.Object) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	res, ok := s.reg.ByKind(gvk)
	if !ok {
		return fmt.Errorf("ensuring %T: kind %s is not served", obj, gvk)
	}
	return res.store.Ensure(ctx, obj)
}
