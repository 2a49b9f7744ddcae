package apiserver

import (
	"context"

	utilfeature "k8s.io/apiserver/pkg/util/feature"

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

// admitSubresourceWrite runs the store's admission of a POST to a
// subresource served by its kind (store.AdmitSubresourceCreate); other
// verbs are not writes.
func (s *Server) admitSubresourceWrite(ctx context.Context, res *Resource, info requestInfo, body any) error {
	if info.Verb != "create" {
		return nil
	}
	return res.store.AdmitSubresourceCreate(ctx, info.Subresource, info.Namespace, info.Name, body)
}
