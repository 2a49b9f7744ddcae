// Package deviceclass is the strategy of resource.k8s.io/v1 DeviceClasses:
// cluster-scoped, upstream's defaulting and validation (CEL selectors
// compiled as kube-apiserver compiles them;
// pkg/registry/resource/deviceclass/strategy.go). Alpha DRA fields are not
// dropped.
package deviceclass

import (
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the DeviceClass strategy.
func New() upstream.Strategy[resource.DeviceClass] {
	return upstream.Strategy[resource.DeviceClass]{Default: rest.Default{ReturnDeletedObject: true}, Rules: upstream.Rules[resource.DeviceClass]{
		Validate:       resourcevalidation.ValidateDeviceClass,
		ValidateUpdate: resourcevalidation.ValidateDeviceClassUpdate,
	}}
}
