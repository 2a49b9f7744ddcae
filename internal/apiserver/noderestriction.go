package apiserver

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/noderestriction"
)

// nodeRestriction is kube's NodeRestriction admission, always on (kubeadm
// enables it; docs/apiserver.md#noderestriction): writes by node agents
// are confined to their own Node, Lease and pods. Stateless, so one for
// every server.
var nodeRestriction = noderestriction.New()

// admitNodeWrite runs NodeRestriction on a create (old nil), an update or
// a delete (obj nil, old the stored object) of res by the request's user,
// before the kind's own admission and validation, where kube-apiserver's
// admission chain runs it.
func admitNodeWrite(ctx context.Context, res *Resource, op admission.Operation, subresource, namespace, name string, obj, old any) error {
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
	return nodeRestriction.Admit(in)
}
