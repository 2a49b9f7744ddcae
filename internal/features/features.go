// Package features defines dnsplane's feature gates. A gate set is a value
// built by New and passed down to whoever needs it; there is no package-level
// gate, so tests and several components in one process never share state.
package features

import (
	"fmt"

	"k8s.io/component-base/featuregate"
)

const (
	// RelaxedDNSSearchValidation (KEP-4427) allows '_' wherever '-' is
	// allowed, and a single ".", in pod dnsConfig.searches and
	// dnsParams.custom.search.
	RelaxedDNSSearchValidation featuregate.Feature = "RelaxedDNSSearchValidation"
	// PodDNSCustomPolicy allows dnsPolicy Custom with spec.dnsParams.custom.
	PodDNSCustomPolicy featuregate.Feature = "PodDNSCustomPolicy"
	// PodDNSAutopath allows dnsPolicy ClusterFirstWithAutopath.
	PodDNSAutopath featuregate.Feature = "PodDNSAutopath"
	// ServerSideFieldValidation (KEP-2885) makes the API server honour the
	// fieldValidation query parameter and advertise it in OpenAPI.
	ServerSideFieldValidation featuregate.Feature = "ServerSideFieldValidation"
)

func specs() map[featuregate.Feature]featuregate.FeatureSpec {
	return map[featuregate.Feature]featuregate.FeatureSpec{
		RelaxedDNSSearchValidation: {Default: true, PreRelease: featuregate.Beta},
		PodDNSCustomPolicy:         {Default: true, PreRelease: featuregate.Beta},
		PodDNSAutopath:             {Default: true, PreRelease: featuregate.Beta},
		ServerSideFieldValidation:  {Default: true, PreRelease: featuregate.Beta},
	}
}

// New returns a gate set with every dnsplane gate at its default. Register
// it on a flag set with AddFlag to accept --feature-gates=Name=bool,….
func New() featuregate.MutableFeatureGate {
	fg := featuregate.NewFeatureGate()
	if err := fg.Add(specs()); err != nil {
		// The specs are constant; failing here is a programming error.
		panic(fmt.Sprintf("registering feature gates: %v", err))
	}
	return fg
}

// Parse returns a gate set with the given --feature-gates value applied
// ("" leaves every gate at its default).
func Parse(value string) (featuregate.MutableFeatureGate, error) {
	fg := New()
	if value == "" {
		return fg, nil
	}
	if err := fg.Set(value); err != nil {
		return nil, fmt.Errorf("invalid --feature-gates %q: %w", value, err)
	}
	return fg, nil
}
