// Package namespace is the strategy of core/v1 Namespaces: upstream's
// defaulting and validation (pkg/registry/core/namespace/strategy.go), the
// namespaces upstream never deletes, the Terminating stage a delete starts
// (pkg/registry/core/namespace/storage/storage.go) and the finalize
// subresource that ends it once the namespace controller has emptied the
// namespace (docs/apiserver.md, "Namespaces").
package namespace

import (
	"context"
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the Namespace strategy.
type Strategy struct {
	upstream.Strategy[core.Namespace]
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.StatusStrategy  = Strategy{}
	_ rest.FieldSelectable = Strategy{}
	_ rest.DeleteHook      = Strategy{}
	_ rest.StagedDeleter   = Strategy{}
)

// New returns the Namespace strategy.
func New() Strategy {
	return Strategy{
		Strategy: upstream.Strategy[core.Namespace]{
			Default: rest.Default{Status: true, ReturnDeletedObject: true},
			Rules: upstream.Rules[core.Namespace]{
				Validate: corevalidation.ValidateNamespace,
				ValidateUpdate: func(ns, old *core.Namespace) field.ErrorList {
					return append(corevalidation.ValidateNamespace(ns), corevalidation.ValidateNamespaceUpdate(ns, old)...)
				},
				ValidateStatusUpdate: corevalidation.ValidateNamespaceStatusUpdate,
			},
		},
	}
}

// undeletable are the namespaces upstream refuses to delete.
var undeletable = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// PrepareForCreate applies upstream's defaults (the
// kubernetes.io/metadata.name label; SetDefaults_Namespace in
// pkg/apis/core/v1/defaults.go) and what upstream's strategy sets: phase
// Active whatever the client sent, and the "kubernetes" finalizer the
// namespace controller removes once a deleted namespace is empty. The name
// is known here (the API server generates it before preparing), so
// defaulting sets the label upstream's Canonicalize would set after
// generateName.
func (s Strategy) PrepareForCreate(_ context.Context, obj any) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	s.ApplyDefaults(obj)
}

// PrepareForUpdate keeps the stored status and spec.finalizers: only
// /status and /finalize change them, as upstream's strategy.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	obj.(*corev1.Namespace).Spec.Finalizers = old.(*corev1.Namespace).Spec.Finalizers
	s.Strategy.PrepareForUpdate(ctx, obj, old)
}

// SelectableFields are the namespace fields upstream accepts in a
// fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"status.phase"} }

// FieldSet returns the selectable fields of a namespace.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
}

// CheckDelete refuses to delete default, kube-system and kube-public, with
// the answer of upstream's NamespaceLifecycle admission.
func (Strategy) CheckDelete(name string) error {
	if undeletable[name] {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, name, errors.New("this namespace may not be deleted"))
	}
	return nil
}

// BeginDelete is upstream's namespace delete: the first delete sets
// deletionTimestamp (no grace period) and phase Terminating and sets the
// garbage collector's finalizers as the options ask; the namespace then
// stays while spec.finalizers holds anything (the namespace controller
// removes "kubernetes" through /finalize once the namespace is empty);
// after that the generic rules apply to metadata.finalizers.
func (Strategy) BeginDelete(obj any, opts *metav1.DeleteOptions, now time.Time) rest.DeleteStep {
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil {
		ts := metav1.NewTime(now.Truncate(time.Second))
		ns.DeletionTimestamp = &ts
		ns.Status.Phase = corev1.NamespaceTerminating
		ns.Finalizers = gcFinalizers(ns.Finalizers, opts)
		return rest.DeleteMarked
	}
	if len(ns.Spec.Finalizers) > 0 {
		return rest.DeleteWaits
	}
	return rest.DeleteGeneric
}

// KeepsObject keeps a namespace whose spec.finalizers is not empty
// (ShouldDeleteNamespaceDuringUpdate).
func (Strategy) KeepsObject(obj any) bool {
	return len(obj.(*corev1.Namespace).Spec.Finalizers) > 0
}

// gcFinalizers are the metadata.finalizers of a namespace's first delete
// (upstream's shouldHaveOrphanFinalizer and
// shouldHaveDeleteDependentsFinalizer): unlike other kinds, the
// deprecated orphanDependents=false asks for foreground deletion, and
// without options the namespace keeps what it has.
func gcFinalizers(have []string, opts *metav1.DeleteOptions) []string {
	orphan := slices.Contains(have, metav1.FinalizerOrphanDependents)
	foreground := slices.Contains(have, metav1.FinalizerDeleteDependents)
	if opts != nil {
		//nolint:staticcheck // SA1019: kube-apiserver still honours the deprecated field
		if o := opts.OrphanDependents; o != nil {
			orphan, foreground = *o, !*o
		} else if p := opts.PropagationPolicy; p != nil {
			orphan, foreground = *p == metav1.DeletePropagationOrphan, *p == metav1.DeletePropagationForeground
		}
	}
	out := slices.DeleteFunc(slices.Clone(have), func(f string) bool {
		return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
	})
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Subresources are the namespace's own: finalize, which ends the
// Terminating stage once the namespace controller has emptied the
// namespace (upstream's FinalizeREST, pkg/registry/core/namespace/storage:
// the namespace store with namespaceFinalizeStrategy, PUT only).
func (s Strategy) Subresources() []rest.Subresource {
	// Not in the OpenAPI documents, where kube-apiserver has
	// replaceCoreV1NamespaceFinalize: dnsplane's documents never listed it.
	return []rest.Subresource{{Name: "finalize", Verbs: []string{"update"}, Update: finalize{}}}
}

// finalize is upstream's namespaceFinalizeStrategy: a PUT to /finalize
// changes spec.finalizers (and metadata) and never the status, and is
// checked with ValidateNamespaceFinalizeUpdate. When it leaves a
// terminating namespace without finalizers of either kind, the update
// deletes it (the namespace's KeepsObject). No admission plugin of
// kube-apiserver's defaults checks it.
type finalize struct{}

var _ rest.SubresourceStrategy = finalize{}

// PrepareForUpdate keeps the stored status.
func (finalize) PrepareForUpdate(_ context.Context, obj, old any) any {
	obj.(*corev1.Namespace).Status = old.(*corev1.Namespace).Status
	return obj
}

// ValidateUpdate is upstream's ValidateNamespaceFinalizeUpdate.
func (finalize) ValidateUpdate(_ context.Context, obj, old any) field.ErrorList {
	var ns, oldNS core.Namespace
	if err := upstream.Convert(obj.(*corev1.Namespace), &ns); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if err := upstream.Convert(old.(*corev1.Namespace), &oldNS); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return corevalidation.ValidateNamespaceFinalizeUpdate(&ns, &oldNS)
}

// ResetFields is the status, which /finalize never writes.
func (finalize) ResetFields() *fieldpath.Set {
	return fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
}
