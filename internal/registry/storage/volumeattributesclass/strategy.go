// Package volumeattributesclass is the strategy of storage.k8s.io/v1
// VolumeAttributesClasses: cluster-scoped, upstream's defaulting and
// validation (pkg/registry/storage/volumeattributesclass/strategy.go).
package volumeattributesclass

import (
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the VolumeAttributesClass strategy.
func New() upstream.Strategy[storage.VolumeAttributesClass] {
	return upstream.Strategy[storage.VolumeAttributesClass]{Default: rest.Default{ReturnDeletedObject: true}, Rules: upstream.Rules[storage.VolumeAttributesClass]{
		Validate:       storagevalidation.ValidateVolumeAttributesClass,
		ValidateUpdate: storagevalidation.ValidateVolumeAttributesClassUpdate,
	}}
}
