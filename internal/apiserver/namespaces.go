package apiserver

import (
	"context"
	"fmt"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GetNamespace reads a stored namespace, for the strategies whose rules
// depend on its labels (internal/registry: DRA admin access, which
// kube-apiserver's resourceclaim storage also reads live) and for Pod
// Security on a server without informers (tests).
func (s *Server) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	nsRes, _ := s.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	kv, err := s.storage.Get(ctx, store.Key(&nsRes.Resource, "", name))
	if err != nil {
		return nil, store.Error(&nsRes.Resource, name, err)
	}
	obj, err := store.Decode(&nsRes.Resource, kv)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("namespace %q decoded as %T", name, obj)
	}
	return ns, nil
}

// ListPods reads the pods of a namespace as k8s.io/api Pods, for Pod
// Security admission's warnings about the pods a stricter enforce level
// would refuse (internal/admission/podsecurity), on a server without
// informers (tests); with them, the pod informer's cache is read, as
// kube-apiserver's plugin does.
func (s *Server) ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	res, _ := s.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	viewer, ok := res.Strategy.(interface {
		Upstream(obj any) (runtime.Object, func())
	})
	if !ok {
		return nil, fmt.Errorf("pods: strategy %T has no k8s.io/api view", res.Strategy)
	}
	objs, _, err := s.listAll(ctx, res, store.ListPrefix(&res.Resource, namespace))
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		v, _ := viewer.Upstream(obj)
		p, ok := v.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("pods: stored object viewed as %T", v)
		}
		pods = append(pods, p)
	}
	return pods, nil
}
