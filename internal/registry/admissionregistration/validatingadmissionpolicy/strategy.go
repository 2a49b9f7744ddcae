// Package validatingadmissionpolicy is the strategy of
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies: cluster-scoped,
// with a status subresource, upstream's defaulting and validation
// (pkg/registry/admissionregistration/validatingadmissionpolicy/strategy.go),
// CEL expressions compiled as upstream compiles them. dnsplane stores
// policies and does not enforce them (docs/apiserver.md); with no
// authorization, upstream's check that the writer may read the paramKind
// has nothing to ask.
package validatingadmissionpolicy

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	arvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ValidatingAdmissionPolicy strategy.
func New() upstream.Strategy[admissionregistration.ValidatingAdmissionPolicy] {
	return upstream.Strategy[admissionregistration.ValidatingAdmissionPolicy]{
		Default: rest.Default{Status: true},
		Rules: upstream.Rules[admissionregistration.ValidatingAdmissionPolicy]{
			Validate: func(p *admissionregistration.ValidatingAdmissionPolicy) field.ErrorList {
				return append(arvalidation.ValidateValidatingAdmissionPolicy(p), StaticSuffix(p.Name)...)
			},
			ValidateUpdate:       arvalidation.ValidateValidatingAdmissionPolicyUpdate,
			ValidateStatusUpdate: arvalidation.ValidateValidatingAdmissionPolicyStatusUpdate,
		},
	}
}

// StaticSuffix refuses, on create, the name suffix upstream keeps for
// policies loaded from manifests once ManifestBasedAdmissionControlConfig is
// on (beta and on by default in 1.37), as upstream's policy and binding
// strategies do.
func StaticSuffix(name string) field.ErrorList {
	if !utilfeature.DefaultFeatureGate.Enabled(features.ManifestBasedAdmissionControlConfig) {
		return nil
	}
	return arvalidation.ValidateStaticSuffix(name, field.NewPath("metadata", "name"))
}
