package apiserver

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/dnsplane/dnsplane/internal/admission"
	"github.com/dnsplane/dnsplane/internal/podsecurity"
	"github.com/dnsplane/dnsplane/internal/registry/certificates/certadmission"
	"github.com/dnsplane/dnsplane/internal/registry/rbac/escalation"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// newAdmission builds the server's admission chain (internal/admission)
// over its storage and authorizer.
func newAdmission(s *Server, cfg Config) (*admission.Chain, error) {
	ps, err := podsecurity.New(s, s)
	if err != nil {
		return nil, err
	}
	return admission.New(admission.Config{
		Namespaces:      s,
		NodeRestriction: s.nodeRestriction,
		PodSecurity:     ps,
		View:            admission.Views(s.reg.strategies()),
		// kube's own gates: ClusterTrustBundleAttest reads
		// ClusterTrustBundle, which dnsplane's --feature-gates does not
		// carry.
		Certificates: certadmission.New(cfg.Authorizer, utilfeature.DefaultFeatureGate),
		RBAC:         &escalation.Checker{Authorizer: cfg.Authorizer, Rules: cfg.RBACRules},
	}), nil
}

// admissionRequest is a write of res as the admission chain sees it; name
// is the request's (empty on a create with generateName).
func admissionRequest(res *Resource, op kadmission.Operation, subresource, namespace, name string, obj, old any, dryRun bool) admission.Request {
	return admission.Request{
		Operation: op, Kind: res.GVK, Resource: res.GroupVersion().WithResource(res.Plural),
		Subresource: subresource, Namespace: namespace, Name: name,
		Object: obj, OldObject: old, DryRun: dryRun,
	}
}

// admit runs the chain's mutating plugins on req.
func (s *Server) admit(ctx context.Context, req admission.Request) error {
	return s.admission.Admit(ctx, admission.Attributes(ctx, req))
}

// validate checks obj (old is nil on create) with the metadata rules and
// the kind's strategy (internal/registry), then runs the chain's
// validating plugins on req, as kube-apiserver's create, update and
// /status handlers do: an invalid object gets the 422, not a plugin's
// answer.
func (s *Server) validate(ctx context.Context, res *Resource, req admission.Request, obj, old any) error {
	var errs field.ErrorList
	switch {
	case old == nil:
		errs = rest.ValidateCreate(ctx, res.Strategy, res.Namespaced, obj)
	case req.Subresource == "status":
		errs = rest.ValidateStatusUpdate(ctx, res.Strategy, res.Namespaced, obj, old)
	case rest.IsObjectSubresource(res.Strategy, req.Subresource):
		errs = rest.ValidateSubresourceUpdate(ctx, res.Strategy, res.Namespaced, req.Subresource, obj, old)
	default:
		errs = rest.ValidateUpdate(ctx, res.Strategy, res.Namespaced, obj, old)
	}
	if len(errs) > 0 {
		return invalid(res, accessor(obj).GetName(), errs)
	}
	return s.admission.Validate(ctx, admission.Attributes(ctx, req))
}

// prepareUpdate carries over what no update may change (server metadata)
// and lets the strategy carry over and default the rest.
func prepareUpdate(ctx context.Context, res *Resource, obj, old any) {
	keepServerMetadata(obj, old)
	res.Strategy.PrepareForUpdate(ctx, obj, old)
}

// prepareStatusUpdate builds the object a /status update stores: the old
// object with the new status.
func prepareStatusUpdate(obj, old any) any {
	out := cloneObject(old)
	rest.CopyStatus(out, obj)
	accessor(out).SetResourceVersion(accessor(obj).GetResourceVersion())
	return out
}

// statusValue is obj's Status field; invalid when the kind has none.
func statusValue(obj any) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status")
}

// cloneObject deep-copies one of our objects. Every kind in api.Resources
// is a runtime.Object (upstream's, or dnsplane's with the generated
// DeepCopyObject; api's TestEveryKindIsARuntimeObject), so a failed
// assertion is a programming error. It replaces a JSON round trip: a
// /status write no longer encodes and decodes the whole stored object.
func cloneObject(obj any) any {
	o, ok := obj.(runtime.Object)
	if !ok {
		panic(fmt.Sprintf("apiserver: cloning %T: not a runtime.Object", obj))
	}
	return o.DeepCopyObject()
}

// reserve takes what an object holds outside its own key (Service cluster
// IPs) and returns how to give it back if the write fails.
func reserve(ctx context.Context, res *Resource, obj, old any, dryRun bool) (undo func(), err error) {
	if r, ok := res.Strategy.(rest.Reserver); ok {
		return r.Reserve(ctx, obj, old, dryRun)
	}
	return func() {}, nil
}

// release gives back what a deleted object held.
func release(ctx context.Context, res *Resource, obj any) {
	if r, ok := res.Strategy.(rest.Reserver); ok {
		r.Release(ctx, obj)
	}
}
