// Package validatingadmissionpolicybinding is the strategy of
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBindings:
// cluster-scoped, upstream's defaulting and validation
// (pkg/registry/admissionregistration/validatingadmissionpolicybinding/strategy.go).
// Stored, not enforced (docs/apiserver.md); with no authorization,
// upstream's check that the writer may read the paramRef has nothing to ask.
package validatingadmissionpolicybinding

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	arvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/dnsplane/dnsplane/internal/registry/admissionregistration/validatingadmissionpolicy"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ValidatingAdmissionPolicyBinding strategy.
func New() upstream.Strategy[admissionregistration.ValidatingAdmissionPolicyBinding] {
	return upstream.Strategy[admissionregistration.ValidatingAdmissionPolicyBinding]{
		Default: rest.Default{},
		Rules: upstream.Rules[admissionregistration.ValidatingAdmissionPolicyBinding]{
			Validate: func(b *admissionregistration.ValidatingAdmissionPolicyBinding) field.ErrorList {
				return append(arvalidation.ValidateValidatingAdmissionPolicyBinding(b), validatingadmissionpolicy.StaticSuffix(b.Name)...)
			},
			ValidateUpdate: arvalidation.ValidateValidatingAdmissionPolicyBindingUpdate,
		},
	}
}
