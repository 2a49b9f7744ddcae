// Package namespace is the strategy of core/v1 Namespaces: upstream's
// defaulting and validation (pkg/registry/core/namespace/strategy.go), the
// status a client sends kept on create, the namespaces upstream never
// deletes, and the cascade that deletes a namespace's contents with it.
package namespace

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// ContentsDeleter deletes every namespaced object in a namespace, giving
// back what each held; the API server implements it over its storage.
type ContentsDeleter interface {
	DeleteNamespaceContents(ctx context.Context, namespace string) error
}

// Strategy is the Namespace strategy.
type Strategy struct {
	upstream.Strategy[core.Namespace]
	// Contents deletes what a deleted namespace held; nil when the
	// strategy only validates (dnsplane validate).
	Contents ContentsDeleter
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.StatusStrategy  = Strategy{}
	_ rest.FieldSelectable = Strategy{}
	_ rest.DeleteHook      = Strategy{}
)

// New returns the Namespace strategy deleting contents with c.
func New(c ContentsDeleter) Strategy {
	return Strategy{
		Strategy: upstream.Strategy[core.Namespace]{
			Default: rest.Default{Status: true},
			Rules: upstream.Rules[core.Namespace]{
				Validate: corevalidation.ValidateNamespace,
				ValidateUpdate: func(ns, old *core.Namespace) field.ErrorList {
					return append(corevalidation.ValidateNamespace(ns), corevalidation.ValidateNamespaceUpdate(ns, old)...)
				},
				ValidateStatusUpdate: corevalidation.ValidateNamespaceStatusUpdate,
			},
		},
		Contents: c,
	}
}

// undeletable are the namespaces upstream refuses to delete.
var undeletable = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// PrepareForCreate applies upstream's defaults (phase Active, the
// kubernetes.io/metadata.name label; SetDefaults_Namespace in
// pkg/apis/core/v1/defaults.go) and, unlike upstream, keeps the status a
// client sent: dnsplane has no namespace controller to set it. The name is
// known here (the API server generates it before preparing), so defaulting
// sets the label upstream's Canonicalize would set after generateName.
func (s Strategy) PrepareForCreate(_ context.Context, obj any) {
	s.ApplyDefaults(obj)
}

// SelectableFields are the namespace fields upstream accepts in a
// fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"status.phase"} }

// FieldSet returns the selectable fields of a namespace.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
}

// CheckDelete refuses to delete default, kube-system and kube-public, with
// upstream's answer.
func (Strategy) CheckDelete(name string) error {
	if undeletable[name] {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, name, errors.New("this namespace may not be deleted"))
	}
	return nil
}

// BeforeDelete deletes everything in the namespace. Upstream does this
// asynchronously behind a Terminating phase; dnsplane has no controllers to
// wait for, so it does it in the request and the namespace is gone when
// the delete returns.
func (s Strategy) BeforeDelete(ctx context.Context, obj any) error {
	if s.Contents == nil {
		return errors.New("namespace strategy: no contents deleter")
	}
	return s.Contents.DeleteNamespaceContents(ctx, obj.(*corev1.Namespace).Name)
}
