package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GetNamespace reads a stored namespace, for the strategies whose rules
// depend on its labels (internal/registry: DRA admin access).
func (s *Server) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	nsRes, _ := s.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	kv, err := s.store.Get(ctx, storageKey(nsRes, "", name))
	if err != nil {
		return nil, storageError(nsRes, name, err)
	}
	obj, err := decodeStored(nsRes, kv)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("namespace %q decoded as %T", name, obj)
	}
	return ns, nil
}
