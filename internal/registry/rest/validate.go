package rest

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCreate is every check a create runs on an object its strategy
// has prepared: the object metadata with the kind's name rule and scope,
// then the strategy's own rules. The API server and `dnsplane validate`
// both call it, so the two cannot disagree.
func ValidateCreate(ctx context.Context, s Strategy, namespaced bool, obj any) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, namespaced, s.NameRule(), field.NewPath("metadata"))
	return append(errs, s.Validate(ctx, obj)...)
}

// ValidateUpdate is every check an update of obj over old runs: the
// metadata, its update rules (immutable name, namespace, uid, …), then the
// strategy's own update rules.
func ValidateUpdate(ctx context.Context, s Strategy, namespaced bool, obj, old any) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	o, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, namespaced, s.NameRule(), field.NewPath("metadata"))
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, o, field.NewPath("metadata"))...)
	return append(errs, s.ValidateUpdate(ctx, obj, old)...)
}
