// Package endpointslice is the strategy of discovery.k8s.io/v1
// EndpointSlices: upstream's defaulting and validation, and upstream's
// generation rule (pkg/registry/discovery/endpointslice/strategy.go).
package endpointslice

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/kubernetes/pkg/apis/discovery"
	discoveryvalidation "k8s.io/kubernetes/pkg/apis/discovery/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the EndpointSlice strategy.
type Strategy struct {
	upstream.Strategy[discovery.EndpointSlice]
}

var (
	_ rest.Strategy     = Strategy{}
	_ rest.Generational = Strategy{}
)

// New returns the EndpointSlice strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[discovery.EndpointSlice]{
		Default: rest.Default{Namespaced: true},
		Rules: upstream.Rules[discovery.EndpointSlice]{
			Validate:       discoveryvalidation.ValidateEndpointSliceCreate,
			ValidateUpdate: discoveryvalidation.ValidateEndpointSliceUpdate,
		},
	}}
}

// GenerationChanged is upstream's rule: anything but the metadata changed,
// or the labels (which tie a slice to its Service and managing
// controller). A slice has no spec; its address type, endpoints and ports
// are its desired state.
func (Strategy) GenerationChanged(obj, old any) bool {
	s, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	return s.AddressType != o.AddressType ||
		!apiequality.Semantic.DeepEqual(s.Endpoints, o.Endpoints) ||
		!apiequality.Semantic.DeepEqual(s.Ports, o.Ports) ||
		!apiequality.Semantic.DeepEqual(s.Labels, o.Labels)
}
