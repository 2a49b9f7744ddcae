// Package validatingadmissionpolicybinding is the strategy of
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBindings:
// cluster-scoped, upstream's defaulting and validation
// (pkg/registry/admissionregistration/validatingadmissionpolicybinding/strategy.go).
// Stored only, like the policies; the paramRef read check is skipped as
// upstream skips it without an authorizer.
package validatingadmissionpolicybinding

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	admissionvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ValidatingAdmissionPolicyBinding strategy.
func New() upstream.Strategy[admissionregistration.ValidatingAdmissionPolicyBinding] {
	return upstream.Strategy[admissionregistration.ValidatingAdmissionPolicyBinding]{
		Rules: upstream.Rules[admissionregistration.ValidatingAdmissionPolicyBinding]{
			Validate: func(b *admissionregistration.ValidatingAdmissionPolicyBinding) field.ErrorList {
				errs := admissionvalidation.ValidateValidatingAdmissionPolicyBinding(b)
				// The reserved manifest names, with the alpha gate on.
				if utilfeature.DefaultFeatureGate.Enabled(features.ManifestBasedAdmissionControlConfig) {
					errs = append(errs, admissionvalidation.ValidateStaticSuffix(b.Name, field.NewPath("metadata", "name"))...)
				}
				return errs
			},
			ValidateUpdate: admissionvalidation.ValidateValidatingAdmissionPolicyBindingUpdate,
		},
	}
}
