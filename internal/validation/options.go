package validation

import (
	"k8s.io/component-base/featuregate"

	"github.com/dnsplane/dnsplane/internal/features"
)

// Options are the gates that change pod DNS validation. The zero value is the
// strictest set: upstream search rules before KEP-4427 and neither dnsplane
// policy.
type Options struct {
	RelaxedDNSSearchValidation bool
	PodDNSCustomPolicy         bool
	PodDNSAutopath             bool
}

// OptionsFromGates reads the validation gates from fg. A nil fg means every
// gate at its default, so callers that never parsed --feature-gates get the
// same behaviour as a server started without the flag.
func OptionsFromGates(fg featuregate.FeatureGate) Options {
	if fg == nil {
		fg = features.New()
	}
	return Options{
		RelaxedDNSSearchValidation: fg.Enabled(features.RelaxedDNSSearchValidation),
		PodDNSCustomPolicy:         fg.Enabled(features.PodDNSCustomPolicy),
		PodDNSAutopath:             fg.Enabled(features.PodDNSAutopath),
	}
}
