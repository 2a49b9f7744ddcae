// Package validatingadmissionpolicy is the strategy of
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies:
// cluster-scoped, with a status subresource, upstream's defaulting and
// validation, CEL expressions compiled as kube-apiserver compiles them
// (pkg/registry/admissionregistration/validatingadmissionpolicy/strategy.go).
// The policies are stored only: dnsplane does not admit requests with them.
// Upstream's check that the author may read the paramKind resources is
// skipped, as upstream skips it without an authorizer.
package validatingadmissionpolicy

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	admissionvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ValidatingAdmissionPolicy strategy.
func New() upstream.Strategy[admissionregistration.ValidatingAdmissionPolicy] {
	return upstream.Strategy[admissionregistration.ValidatingAdmissionPolicy]{
		Default: rest.Default{Status: true},
		Rules: upstream.Rules[admissionregistration.ValidatingAdmissionPolicy]{
			Validate: func(p *admissionregistration.ValidatingAdmissionPolicy) field.ErrorList {
				return append(admissionvalidation.ValidateValidatingAdmissionPolicy(p), staticSuffix(p.Name)...)
			},
			ValidateUpdate:       admissionvalidation.ValidateValidatingAdmissionPolicyUpdate,
			ValidateStatusUpdate: admissionvalidation.ValidateValidatingAdmissionPolicyStatusUpdate,
		},
	}
}

// staticSuffix refuses, with the alpha ManifestBasedAdmissionControlConfig
// gate on, the names kube-apiserver reserves for policies loaded from
// manifests.
func staticSuffix(name string) field.ErrorList {
	if !utilfeature.DefaultFeatureGate.Enabled(features.ManifestBasedAdmissionControlConfig) {
		return nil
	}
	return admissionvalidation.ValidateStaticSuffix(name, field.NewPath("metadata", "name"))
}
