package rest

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The three functions below compose a strategy's checks exactly as
// kube-apiserver's generic registry does (ValidateCreate in
// k8s.io/apiserver/pkg/registry/rest/create.go, ValidateUpdate in
// update.go), so that an error response lists the same causes in the same
// order as kube-apiserver's. The API server and `dnsplane validate` both
// call them, so the two cannot disagree.

// ValidateCreate is every check a create runs on an object its strategy has
// prepared: the strategy's rules (metadata included), then, only when they
// pass, the generic metadata rules every kind shares, then declarative
// validation. Running the generic rules only after the kind's own is
// upstream's order: the kind's name rule is the stricter, and its message
// the more specific, so an invalid name is reported once.
func ValidateCreate(ctx context.Context, s Strategy, namespaced bool, obj any) field.ErrorList {
	errs := s.Validate(ctx, obj)
	if len(errs) == 0 {
		m, err := meta.Accessor(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(field.NewPath("metadata"), fmt.Errorf("failed to get object metadata: %w", err))}
		}
		errs = apivalidation.ValidateObjectMetaAccessor(m, namespaced, pathSegmentName, field.NewPath("metadata"))
	}
	if d, ok := s.(Declarative); ok {
		errs = d.ValidateDeclaratively(ctx, obj, nil, errs, "")
	}
	return errs
}

// ValidateUpdate is every check an update of obj over old runs: the generic
// metadata rules and their update rules (immutable name, namespace, uid,
// …), then the strategy's update rules, then declarative validation.
//
// Upstream's Validate<Kind>Update functions check the metadata again; for
// the kinds with declarative validation (every upstream kind dnsplane
// serves) the merge drops the repeated errors (upstream.Declarative), as it
// does in kube-apiserver, so each is reported once.
func ValidateUpdate(ctx context.Context, s Strategy, namespaced bool, obj, old any) field.ErrorList {
	errs := validateCommon(namespaced, obj, old)
	errs = append(errs, s.ValidateUpdate(ctx, obj, old)...)
	if d, ok := s.(Declarative); ok {
		errs = d.ValidateDeclaratively(ctx, obj, old, errs, "")
	}
	return errs
}

// ValidateSubresourceUpdate is every check a write of obj over old through
// sub, a subresource that writes its parent whole (status, finalize,
// approval), runs: as ValidateUpdate, with the subresource's rules in place
// of the kind's, and declarative validation of the subresource's path.
func ValidateSubresourceUpdate(ctx context.Context, s Strategy, sub Subresource, namespaced bool, obj, old any) field.ErrorList {
	errs := validateCommon(namespaced, obj, old)
	errs = append(errs, sub.Update.ValidateUpdate(ctx, obj, old)...)
	if d, ok := s.(Declarative); ok {
		errs = d.ValidateDeclaratively(ctx, obj, old, errs, sub.Name)
	}
	return errs
}

// validateCommon is what kube-apiserver checks on every update of every
// kind before the kind's own rules (validateCommonFields in
// k8s.io/apiserver/pkg/registry/rest/update.go).
func validateCommon(namespaced bool, obj, old any) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), fmt.Errorf("failed to get new object metadata: %w", err))}
	}
	o, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), fmt.Errorf("failed to get old object metadata: %w", err))}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, namespaced, pathSegmentName, field.NewPath("metadata"))
	return append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(m, o, field.NewPath("metadata"))...)
}

// pathSegmentName is the name rule of the generic checks: a name must be
// usable as one URL path segment. Each kind's own rule is stricter.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
