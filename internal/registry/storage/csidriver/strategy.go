// Package csidriver is the strategy of storage.k8s.io/v1 CSIDrivers:
// cluster-scoped, upstream's defaulting and validation
// (pkg/registry/storage/csidriver/strategy.go). The fields upstream drops
// when their feature gates are off are all behind gates that are on by
// default (GA or beta), so none is dropped here.
package csidriver

import (
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the CSIDriver strategy.
func New() upstream.Strategy[storage.CSIDriver] {
	return upstream.Strategy[storage.CSIDriver]{Default: rest.Default{ReturnDeletedObject: true}, Rules: upstream.Rules[storage.CSIDriver]{
		Validate:       storagevalidation.ValidateCSIDriver,
		ValidateUpdate: storagevalidation.ValidateCSIDriverUpdate,
	}}
}
