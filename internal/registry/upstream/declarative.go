package upstream

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// Declarative runs upstream's declarative validation (the generated
// zz_generated.validations.go of each API group) on obj, a k8s.io/api
// object, against old (nil on create), and merges it into errs, the
// handwritten validation's errors, as kube-apiserver does for every kind
// whose strategy embeds rest.DeclarativeValidation: declarative errors that
// are enforced are appended, and the handwritten errors they cover are
// dropped. subresource is "status" for a /status update, "" otherwise;
// options are the ones the kind's strategy declares
// (DeclarativeValidationConfig upstream), nil when it declares none;
// normalization are the config's NormalizationRules, which map the paths of
// handwritten errors to declarative ones when deciding which are covered. The
// merge also drops repeated handwritten errors (FilterCoveredHandwrittenErrors
// filters through field.ErrorList.ToAggregate, which keeps each message
// once), so an error upstream's validators report twice reaches the client
// once, as from kube-apiserver.
//
// This is k8s.io/apiserver's rest.ValidateDeclarativelyWithMigrationChecks
// without its mismatch metrics and logging, built from the same
// apimachinery calls: that package would link CEL and the admission
// machinery into dnsplane for a comparison only kube-apiserver's
// operators read.
func Declarative(ctx context.Context, obj, old runtime.Object, errs field.ErrorList, subresource string, options map[string]bool, normalization ...field.NormalizationRule) field.ErrorList {
	errs = errs.MarkFromImperative()
	var subresources []string
	if subresource != "" {
		subresources = []string{subresource}
	}
	declared := declarative(ctx, obj, old, options, subresources)
	beta := utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta)
	enforced := validate.FilterEnforcedDeclarativeErrors(ctx, declared, beta)
	errs = validate.FilterCoveredHandwrittenErrors(ctx, errs, enforced, beta, normalization...)
	return append(errs, enforced...)
}

// declarative runs the generated validation, turning a panic into an
// internal error as kube-apiserver's runDeclarativeValidationWithRecover
// does: a bug in generated code must fail one request, not the server.
func declarative(ctx context.Context, obj, old runtime.Object, options map[string]bool, subresources []string) (errs field.ErrorList) {
	defer func() {
		if r := recover(); r != nil {
			errs = append(errs, field.InternalError(nil, fmt.Errorf("panic during declarative validation: %v", r)))
		}
	}()
	if old == nil {
		return scheme().Validate(ctx, options, obj, subresources...)
	}
	return scheme().ValidateUpdate(ctx, options, obj, old, subresources...)
}
