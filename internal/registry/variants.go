package registry

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// withStatus gives s a status subresource whose writes validateStatus
// checks: the main resource then keeps the stored status, and a create
// starts with none, as upstream's strategies of such kinds do.
func withStatus[I any](s upstream.Strategy[I], validateStatus func(*I, *I) field.ErrorList) upstream.Strategy[I] {
	s.Status = true
	s.Rules.ValidateStatusUpdate = validateStatus
	return s
}

// clusterScoped makes s the strategy of a kind outside namespaces.
func clusterScoped[I any](s upstream.Strategy[I]) upstream.Strategy[I] {
	s.Namespaced = false
	return s
}

// validateNetworkPolicy and validateNetworkPolicyUpdate are upstream's
// with the options its strategy computes (ValidationOptionsForNetworking).
func validateNetworkPolicy(np *networking.NetworkPolicy) field.ErrorList {
	return networkingvalidation.ValidateNetworkPolicy(np, networkingvalidation.ValidationOptionsForNetworking(np, nil))
}

func validateNetworkPolicyUpdate(np, old *networking.NetworkPolicy) field.ErrorList {
	return networkingvalidation.ValidateNetworkPolicyUpdate(np, old, networkingvalidation.ValidationOptionsForNetworking(np, old))
}

// validateIPAddressUpdate is upstream's: the object's own rules, then what
// may not change.
func validateIPAddressUpdate(ip, old *networking.IPAddress) field.ErrorList {
	return append(networkingvalidation.ValidateIPAddress(ip), networkingvalidation.ValidateIPAddressUpdate(ip, old)...)
}

// validateLimitRangeUpdate is upstream's: an update is checked as a create.
func validateLimitRangeUpdate(lr, _ *core.LimitRange) field.ErrorList {
	return corevalidation.ValidateLimitRange(lr)
}

// returnsDeletedObject makes an immediate delete of s's kind answer with
// the object, as upstream's store of the kind (ReturnDeletedObject).
func returnsDeletedObject[I any](s upstream.Strategy[I]) upstream.Strategy[I] {
	s.ReturnDeletedObject = true
	return s
}

// notGarbageCollected is upstream's Unsupported policy: deletes of the
// kind never get the orphan or foregroundDeletion finalizer (Events,
// pkg/registry/core/event/strategy.go).
func notGarbageCollected[I any](s upstream.Strategy[I]) upstream.Strategy[I] {
	s.GarbageCollection = genericrest.Unsupported
	return s
}

// specGeneration is a kind whose upstream strategy keeps
// metadata.generation: 1 on create, one more on each update that changes
// the spec (rest.Generational).
type specGeneration[I any] struct{ upstream.Strategy[I] }

// GenerationChanged implements rest.Generational.
func (specGeneration[I]) GenerationChanged(obj, old any) bool { return rest.SpecChanged(obj, old) }

// keepsGeneration gives s's kind upstream's generation rule (Ingress,
// IngressClass, NetworkPolicy, DeviceClass, ResourceSlice and the
// admission policies set Generation in PrepareForCreate and bump it on a
// spec change in PrepareForUpdate).
func keepsGeneration[I any](s upstream.Strategy[I]) specGeneration[I] { return specGeneration[I]{s} }
