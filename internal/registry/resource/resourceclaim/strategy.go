// Package resourceclaim is the strategy of resource.k8s.io/v1
// ResourceClaims: namespaced, with a status subresource, upstream's
// defaulting and validation (pkg/registry/resource/resourceclaim/strategy.go)
// with its declarative validation's path normalization.
//
// Not made, as kube-apiserver makes them: the check that a request for
// admin access comes from a namespace labelled
// resource.kubernetes.io/admin-access (it reads the namespace) and the
// alpha DRAResourceClaimGranularStatusAuthorization checks (they ask an
// authorizer; dnsplane has none yet). Fields of DRA features whose gates
// are off by default (alpha) are not dropped.
package resourceclaim

import (
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ResourceClaim strategy.
func New() upstream.Strategy[resource.ResourceClaim] {
	return upstream.Strategy[resource.ResourceClaim]{
		Default: rest.Default{Namespaced: true, Status: true},
		Rules: upstream.Rules[resource.ResourceClaim]{
			Validate:             resourcevalidation.ValidateResourceClaim,
			ValidateUpdate:       resourcevalidation.ValidateResourceClaimUpdate,
			ValidateStatusUpdate: resourcevalidation.ValidateResourceClaimStatusUpdate,
			NormalizationRules:   resourcevalidation.ResourceNormalizationRules,
		},
	}
}
