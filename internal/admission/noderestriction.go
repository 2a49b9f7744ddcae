package admission

import (
	"context"

	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/noderestriction"
)

// nodeRestriction is kube's NodeRestriction (internal/noderestriction) on
// every write by a node agent: creates, updates and deletes of the main
// resource and creates on subresources (tokens, evictions, bindings).
type nodeRestriction struct {
	*kadmission.Handler
	nr *noderestriction.Admission
}

var _ kadmission.MutationInterface = nodeRestriction{}

func newNodeRestriction(nr *noderestriction.Admission) kadmission.Interface {
	if nr == nil {
		return nil
	}
	return nodeRestriction{Handler: kadmission.NewHandler(kadmission.Create, kadmission.Update, kadmission.Delete), nr: nr}
}

// Admit judges writes by users of the system:nodes group.
func (p nodeRestriction) Admit(ctx context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return nil
	}
	// A write to a subresource names its parent; a create's object may have
	// a generated name the request did not carry.
	name := a.GetName()
	if a.GetSubresource() == "" {
		name = objectName(a)
	}
	return p.nr.Admit(ctx, noderestriction.Attributes{
		User: authz.UserInfo(u), Operation: a.GetOperation(), Resource: a.GetResource(),
		Subresource: a.GetSubresource(), Namespace: a.GetNamespace(), Name: name,
		Object: a.GetObject(), OldObject: a.GetOldObject(),
	})
}
