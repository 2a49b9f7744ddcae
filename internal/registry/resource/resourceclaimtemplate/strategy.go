// Package resourceclaimtemplate is the strategy of resource.k8s.io/v1
// ResourceClaimTemplates: namespaced, upstream's defaulting and validation
// (pkg/registry/resource/resourceclaimtemplate/strategy.go, which validates
// the whole template again on update) with its declarative validation's
// path normalization. As for ResourceClaims, the admin-access namespace
// label check is not made and alpha DRA fields are not dropped.
package resourceclaimtemplate

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ResourceClaimTemplate strategy.
func New() upstream.Strategy[resource.ResourceClaimTemplate] {
	return upstream.Strategy[resource.ResourceClaimTemplate]{
		Default: rest.Default{Namespaced: true},
		Rules: upstream.Rules[resource.ResourceClaimTemplate]{
			Validate: resourcevalidation.ValidateResourceClaimTemplate,
			ValidateUpdate: func(t, old *resource.ResourceClaimTemplate) field.ErrorList {
				return append(resourcevalidation.ValidateResourceClaimTemplate(t), resourcevalidation.ValidateResourceClaimTemplateUpdate(t, old)...)
			},
			NormalizationRules: resourcevalidation.ResourceNormalizationRules,
		},
	}
}
