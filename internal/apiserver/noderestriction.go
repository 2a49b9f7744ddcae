package apiserver

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/noderestriction"
)

// newNodeRestriction is kube's NodeRestriction admission, always on
// (kubeadm enables it; docs/apiserver.md#noderestriction): writes by node
// agents are confined to their own Node, Lease, pods and what hangs off
// them. It reads the pods, nodes, service accounts and volumes its rules
// name from s's storage, and asks s's authorizer about the grants a node
// may hold beyond its pods' volumes.
func newNodeRestriction(s *Server, cfg Config) *noderestriction.Admission {
	return noderestriction.New(noderestriction.Config{Objects: objects{s}, Authorizer: cfg.Authorizer, Gates: utilfeature.DefaultFeatureGate})
}

// admitNodeWrite runs NodeRestriction on a create (old nil), an update or
// a delete (obj nil, old the stored object) of res by the request's user,
// before the kind's own admission and validation, where kube-apiserver's
// admission chain runs it.
func (s *Server) admitNodeWrite(ctx context.Context, res *Resource, op admission.Operation, subresource, namespace, name string, obj, old any) error {
	u, ok := authn.UserFrom(ctx)
	if !ok {
		// In-process callers with no request (tests, bootstrap) are the
		// server itself.
		return nil
	}
	in := noderestriction.Attributes{
		User: authz.UserInfo(u), Operation: op, Resource: res.GroupVersion().WithResource(res.Plural),
		Subresource: subresource, Namespace: namespace, Name: name,
	}
	if o, ok := obj.(runtime.Object); ok {
		in.Object = o
	}
	if o, ok := old.(runtime.Object); ok {
		in.OldObject = o
	}
	return s.nodeRestriction.Admit(ctx, in)
}

// admitSubresourceWrite runs NodeRestriction on a POST to a subresource
// served by its kind (serviceaccounts/token, pods/eviction, pods/binding),
// with its body as the object and the parent's name, as kube-apiserver
// admits a create on a subresource. Connections (exec, attach) are not
// writes: kube admits them as CONNECT, which NodeRestriction ignores.
func (s *Server) admitSubresourceWrite(ctx context.Context, res *Resource, info requestInfo, body any) error {
	if info.Verb != "create" {
		return nil
	}
	return s.admitNodeWrite(ctx, res, admission.Create, info.Subresource, info.Namespace, info.Name, body, nil)
}
