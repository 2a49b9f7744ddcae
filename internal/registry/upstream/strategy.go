package upstream

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Rules are the validators kube-apiserver's strategy for one kind calls
// (pkg/registry/<group>/<kind>/strategy.go: Validate, ValidateUpdate, the
// status strategy's ValidateUpdate, DeclarativeValidationConfig), on
// objects of the kind's internal type I, with the options upstream's
// strategy computes for them.
type Rules[I any] struct {
	Validate       func(obj *I) field.ErrorList
	ValidateUpdate func(obj, old *I) field.ErrorList
	// ValidateStatusUpdate checks a /status write; nil for kinds without a
	// status subresource.
	ValidateStatusUpdate func(obj, old *I) field.ErrorList
	// DeclarativeOptions are the options the kind's declarative validation
	// tags reference; nil when they reference none.
	DeclarativeOptions func() map[string]bool
	// NormalizationRules are the kind's DeclarativeValidationConfig
	// NormalizationRules (resource.k8s.io claims and templates): how
	// handwritten error paths map to declarative ones.
	NormalizationRules []field.NormalizationRule
}

// View returns the k8s.io/api object upstream's code sees for obj, sharing
// obj's metadata, specs and status, and a function that copies what
// defaulting changed in it back into obj. Kinds dnsplane serves with its own
// Go type (the pod template carriers, which add spec.dnsParams) have one;
// nil means obj is already the k8s.io/api object.
type View func(obj any) (upstream runtime.Object, writeBack func())

// Strategy is the strategy of a kind whose defaulting and validation are
// upstream's: defaults of legacyscheme.Scheme on create and update, the
// kind's Rules on the object converted to the internal type I, and its
// declarative validation. Per-kind strategies embed it and add what else the
// kind has.
type Strategy[I any] struct {
	rest.Default
	Rules Rules[I]
	View  View
}

var (
	_ rest.Strategy       = Strategy[struct{}]{}
	_ rest.StatusStrategy = Strategy[struct{}]{}
	_ rest.Declarative    = Strategy[struct{}]{}
)

// PrepareForCreate clears the status of a kind with a status subresource,
// then applies upstream's defaults.
func (s Strategy[I]) PrepareForCreate(ctx context.Context, obj any) {
	s.Default.PrepareForCreate(ctx, obj)
	s.ApplyDefaults(obj)
}

// PrepareForUpdate keeps the stored status of a kind with a status
// subresource, then applies upstream's defaults.
func (s Strategy[I]) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Default.PrepareForUpdate(ctx, obj, old)
	s.ApplyDefaults(obj)
}

// PrepareForStatusUpdate applies upstream's defaults to the object a
// /status write stores, as kube-apiserver defaults every object it decodes.
func (s Strategy[I]) PrepareForStatusUpdate(_ context.Context, obj, _ any) {
	s.ApplyDefaults(obj)
}

// ApplyDefaults applies upstream's v1 defaults to obj through its view.
func (s Strategy[I]) ApplyDefaults(obj any) {
	v, writeBack := s.Upstream(obj)
	Default(v)
	writeBack()
}

// Upstream returns obj's k8s.io/api object and the function that writes
// changes to it back into obj.
func (s Strategy[I]) Upstream(obj any) (runtime.Object, func()) {
	if s.View != nil {
		return s.View(obj)
	}
	return obj.(runtime.Object), func() {}
}

// Validate checks a new object with the kind's upstream validator.
func (s Strategy[I]) Validate(_ context.Context, obj any) field.ErrorList {
	in, err := s.internal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return s.Rules.Validate(in)
}

// ValidateUpdate checks an update with the kind's upstream validator.
func (s Strategy[I]) ValidateUpdate(_ context.Context, obj, old any) field.ErrorList {
	in, o, err := s.internalPair(obj, old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return s.Rules.ValidateUpdate(in, o)
}

// ValidateStatusUpdate checks a /status write with the kind's upstream
// status validator.
func (s Strategy[I]) ValidateStatusUpdate(_ context.Context, obj, old any) field.ErrorList {
	in, o, err := s.internalPair(obj, old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if s.Rules.ValidateStatusUpdate == nil {
		return s.Rules.ValidateUpdate(in, o)
	}
	return s.Rules.ValidateStatusUpdate(in, o)
}

// ValidateDeclaratively merges the kind's declarative validation into errs.
func (s Strategy[I]) ValidateDeclaratively(ctx context.Context, obj, old any, errs field.ErrorList, subresource string) field.ErrorList {
	v, _ := s.Upstream(obj)
	var o runtime.Object
	if old != nil {
		o, _ = s.Upstream(old)
	}
	var options map[string]bool
	if s.Rules.DeclarativeOptions != nil {
		options = s.Rules.DeclarativeOptions()
	}
	return Declarative(ctx, v, o, errs, subresource, options, s.Rules.NormalizationRules...)
}

// internal converts obj, through its view, to the internal type.
func (s Strategy[I]) internal(obj any) (*I, error) {
	v, _ := s.Upstream(obj)
	out := new(I)
	if err := Convert(v, out); err != nil {
		return nil, fmt.Errorf("upstream validation: %w", err)
	}
	return out, nil
}

func (s Strategy[I]) internalPair(obj, old any) (*I, *I, error) {
	in, err := s.internal(obj)
	if err != nil {
		return nil, nil, err
	}
	o, err := s.internal(old)
	if err != nil {
		return nil, nil, err
	}
	return in, o, nil
}
