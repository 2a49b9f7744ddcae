// Package resourceslice is the strategy of resource.k8s.io/v1
// ResourceSlices: cluster-scoped, upstream's defaulting and validation
// (pkg/registry/resource/resourceslice/strategy.go) with the declarative
// validation options and path normalization it declares. Alpha DRA fields
// are not dropped.
package resourceslice

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/kubernetes/pkg/features"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the ResourceSlice strategy.
func New() upstream.Strategy[resource.ResourceSlice] {
	return upstream.Strategy[resource.ResourceSlice]{Default: rest.Default{ReturnDeletedObject: true}, Rules: upstream.Rules[resource.ResourceSlice]{
		Validate:       resourcevalidation.ValidateResourceSlice,
		ValidateUpdate: resourcevalidation.ValidateResourceSliceUpdate,
		DeclarativeOptions: func() map[string]bool {
			return map[string]bool{string(features.DRAPartitionableDevicesType): utilfeature.DefaultFeatureGate.Enabled(features.DRAPartitionableDevicesType)}
		},
		NormalizationRules: resourcevalidation.ResourceNormalizationRules,
	}}
}
