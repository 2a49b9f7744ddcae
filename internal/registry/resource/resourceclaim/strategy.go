// Package resourceclaim is the strategy of resource.k8s.io/v1
// ResourceClaims: namespaced, with a status subresource, upstream's
// defaulting and validation (pkg/registry/resource/resourceclaim/strategy.go)
// with its declarative validation's path normalization, and the admin
// access namespace rule (internal/registry/resource/adminaccess) first, as
// there.
//
// Not made: the alpha DRAResourceClaimGranularStatusAuthorization checks
// (they ask an authorizer; dnsplane has none yet). Fields of DRA features
// whose gates are off by default (alpha) are not dropped.
package resourceclaim

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"

	"github.com/dnsplane/dnsplane/internal/registry/resource/adminaccess"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the ResourceClaim strategy.
type Strategy struct {
	upstream.Strategy[resource.ResourceClaim]
	// Namespaces reads a claim's namespace for the admin access rule; nil
	// (offline validation) skips the rule.
	Namespaces adminaccess.NamespaceGetter
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
	_ rest.Declarative    = Strategy{}
)

// New returns the ResourceClaim strategy.
func New(namespaces adminaccess.NamespaceGetter) Strategy {
	return Strategy{
		Strategy: upstream.Strategy[resource.ResourceClaim]{
			Default: rest.Default{Namespaced: true, Status: true, ReturnDeletedObject: true},
			Rules: upstream.Rules[resource.ResourceClaim]{
				Validate:             resourcevalidation.ValidateResourceClaim,
				ValidateUpdate:       resourcevalidation.ValidateResourceClaimUpdate,
				ValidateStatusUpdate: resourcevalidation.ValidateResourceClaimStatusUpdate,
				NormalizationRules:   resourcevalidation.ResourceNormalizationRules,
			},
		},
		Namespaces: namespaces,
	}
}

// Validate checks the admin access rule, then upstream's rules.
func (s Strategy) Validate(ctx context.Context, obj any) field.ErrorList {
	c := obj.(*resourcev1.ResourceClaim)
	errs := adminaccess.Requests(ctx, s.Namespaces, c.Namespace, c.Spec.Devices.Requests)
	return append(errs, s.Strategy.Validate(ctx, obj)...)
}

// ValidateStatusUpdate checks the admin access rule for a new allocation,
// then upstream's status rules.
func (s Strategy) ValidateStatusUpdate(ctx context.Context, obj, old any) field.ErrorList {
	c, o := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
	errs := adminaccess.Allocation(ctx, s.Namespaces, c.Namespace, &c.Status, &o.Status)
	return append(errs, s.Strategy.ValidateStatusUpdate(ctx, obj, old)...)
}
