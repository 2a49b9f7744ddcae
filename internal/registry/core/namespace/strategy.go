// Package namespace is the strategy of core/v1 Namespaces: the namespace
// name rule, phase Active from creation, the namespaces upstream never
// deletes, and the cascade that deletes a namespace's contents with it.
package namespace

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// ContentsDeleter deletes every namespaced object in a namespace, giving
// back what each held; the API server implements it over its storage.
type ContentsDeleter interface {
	DeleteNamespaceContents(ctx context.Context, namespace string) error
}

// Strategy is the Namespace strategy.
type Strategy struct {
	rest.Default
	// Contents deletes what a deleted namespace held; nil when the
	// strategy only validates (dnsplane validate).
	Contents ContentsDeleter
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.FieldSelectable = Strategy{}
	_ rest.DeleteHook      = Strategy{}
)

// New returns the Namespace strategy deleting contents with c.
func New(c ContentsDeleter) Strategy {
	return Strategy{Default: rest.Default{Status: true}, Contents: c}
}

// undeletable are the namespaces upstream refuses to delete.
var undeletable = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// NameRule is upstream's namespace name rule (a DNS label).
func (Strategy) NameRule() apivalidation.ValidateNameFunc {
	return apivalidation.ValidateNamespaceName
}

// PrepareForCreate keeps the status a client sent, phase defaulting to
// Active: dnsplane has no namespace controller to set it.
func (Strategy) PrepareForCreate(_ context.Context, obj any) {
	if ns := obj.(*corev1.Namespace); ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
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
