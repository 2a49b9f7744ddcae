// Package admission is the API server's one admission chain: the plugins
// kube-apiserver runs by default that apply to the kinds dnsplane serves,
// as k8s.io/apiserver admission.Interface values, in kube-apiserver's
// order (plugins.go, the one list). The store (internal/apiserver/store)
// runs the chain's mutating plugins and, once the kind's validation has
// passed, its validating plugins, on every create, update and delete, dry
// runs included (docs/apiserver.md, "Admission").
//
// The attributes carry the objects as the server serves them (k8s.io/api
// types, and dnsplane's own for the pod template carriers); a plugin that
// hosts upstream code on upstream's internal types converts them itself.
package admission

import (
	"context"
	"fmt"

	kadmission "k8s.io/apiserver/pkg/admission"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
)

// Plugin is one named step of the chain. Its Interface implements
// kadmission.MutationInterface, kadmission.ValidationInterface or both,
// and says through Handles which operations it sees.
type Plugin struct {
	Name string
	kadmission.Interface
}

// Chain runs plugins in order: upstream's chain handler
// (admission.NewChainHandler), which runs the mutating plugins that handle
// a write's operation on Admit and the validating ones on Validate, the
// first refusal ending either. The zero value and nil admit everything.
type Chain struct {
	names   []string
	handler interface {
		kadmission.MutationInterface
		kadmission.ValidationInterface
	}
}

// NewChain returns the chain of plugins, in the order given. A plugin with
// a nil Interface (one its configuration turned off) is left out.
func NewChain(plugins []Plugin) *Chain {
	c := &Chain{}
	var handlers []kadmission.Interface
	for _, p := range plugins {
		if p.Interface != nil {
			c.names = append(c.names, p.Name)
			handlers = append(handlers, p.Interface)
		}
	}
	c.handler = kadmission.NewChainHandler(handlers...)
	return c
}

// Names lists the plugins the chain runs, in order.
func (c *Chain) Names() []string { return c.names }

// Admit runs the mutating plugins on a.
func (c *Chain) Admit(ctx context.Context, a kadmission.Attributes) error {
	if c == nil || c.handler == nil {
		return nil
	}
	return c.handler.Admit(ctx, a, nil)
}

// Validate runs the validating plugins on a.
func (c *Chain) Validate(ctx context.Context, a kadmission.Attributes) error {
	if c == nil || c.handler == nil {
		return nil
	}
	return c.handler.Validate(ctx, a, nil)
}

// Request is one write as the store hands it to the chain.
type Request struct {
	Operation   kadmission.Operation
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// Object is the object to store (nil on delete); OldObject the stored
	// one (nil on create).
	Object, OldObject any
	DryRun            bool
}

// Attributes returns r as the plugins see it, with the request's user from
// ctx. A write with no user in ctx is the server's own (bootstrap objects,
// tests in-process): its UserInfo is nil, and plugins that judge users let
// it through, as kube-apiserver's loopback client is system:masters.
func Attributes(ctx context.Context, r Request) kadmission.Attributes {
	var u user.Info
	if au, ok := authn.UserFrom(ctx); ok {
		u = authz.UserInfo(au)
	}
	return kadmission.NewAttributesRecord(object(r.Object), object(r.OldObject), r.Kind, r.Namespace, r.Name,
		r.Resource, r.Subresource, r.Operation, nil, r.DryRun, u)
}

// objectName is the name of a's object (a generated one included), or the
// request's when it has no object.
func objectName(a kadmission.Attributes) string {
	if m, err := meta.Accessor(a.GetObject()); err == nil && m.GetName() != "" {
		return m.GetName()
	}
	return a.GetName()
}

// object is obj as a runtime.Object: every served kind is one
// (api.TestEveryKindIsARuntimeObject), so anything else is a programming
// error.
func object(obj any) runtime.Object {
	if obj == nil {
		return nil
	}
	o, ok := obj.(runtime.Object)
	if !ok {
		panic(fmt.Sprintf("admission: %T is not a runtime.Object", obj))
	}
	return o
}
