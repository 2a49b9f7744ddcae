// Package resourceclaimtemplate is the strategy of resource.k8s.io/v1
// ResourceClaimTemplates: namespaced, upstream's defaulting and validation
// (pkg/registry/resource/resourceclaimtemplate/strategy.go, which validates
// the whole template again on update) with its declarative validation's
// path normalization, and the admin access namespace rule on create
// (internal/registry/resource/adminaccess). Alpha DRA fields are not
// dropped.
package resourceclaimtemplate

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

// Strategy is the ResourceClaimTemplate strategy.
type Strategy struct {
	upstream.Strategy[resource.ResourceClaimTemplate]
	// Namespaces reads a template's namespace for the admin access rule;
	// nil (offline validation) skips the rule.
	Namespaces adminaccess.NamespaceGetter
}

var (
	_ rest.Strategy    = Strategy{}
	_ rest.Declarative = Strategy{}
)

// New returns the ResourceClaimTemplate strategy.
func New(namespaces adminaccess.NamespaceGetter) Strategy {
	return Strategy{
		Strategy: upstream.Strategy[resource.ResourceClaimTemplate]{
			Default: rest.Default{Namespaced: true, ReturnDeletedObject: true},
			Rules: upstream.Rules[resource.ResourceClaimTemplate]{
				Validate: resourcevalidation.ValidateResourceClaimTemplate,
				ValidateUpdate: func(t, old *resource.ResourceClaimTemplate) field.ErrorList {
					return append(resourcevalidation.ValidateResourceClaimTemplate(t), resourcevalidation.ValidateResourceClaimTemplateUpdate(t, old)...)
				},
				NormalizationRules: resourcevalidation.ResourceNormalizationRules,
			},
		},
		Namespaces: namespaces,
	}
}

// Validate checks the admin access rule, then upstream's rules.
func (s Strategy) Validate(ctx context.Context, obj any) field.ErrorList {
	t := obj.(*resourcev1.ResourceClaimTemplate)
	errs := adminaccess.Requests(ctx, s.Namespaces, t.Namespace, t.Spec.Spec.Devices.Requests)
	return append(errs, s.Strategy.Validate(ctx, obj)...)
}
