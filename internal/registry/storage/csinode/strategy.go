// Package csinode is the strategy of storage.k8s.io/v1 CSINodes:
// cluster-scoped, with a status subresource, upstream's defaulting and
// validation (pkg/registry/storage/csinode/strategy.go).
package csinode

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
	"k8s.io/kubernetes/pkg/features"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the CSINode strategy.
type Strategy struct {
	upstream.Strategy[storage.CSINode]
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
)

// New returns the CSINode strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[storage.CSINode]{
		Default: rest.Default{Status: true, ReturnDeletedObject: true},
		Rules: upstream.Rules[storage.CSINode]{
			Validate:             storagevalidation.ValidateCSINode,
			ValidateUpdate:       storagevalidation.ValidateCSINodeUpdate,
			ValidateStatusUpdate: storagevalidation.ValidateCSINodeStatusUpdate,
		},
	}}
}

// PrepareForCreate clears the status and applies the defaults.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	dropDisabledFields(obj.(*storagev1.CSINode), nil)
}

// PrepareForUpdate keeps the stored status and applies the defaults.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	dropDisabledFields(obj.(*storagev1.CSINode), old.(*storagev1.CSINode))
}

// PrepareForStatusUpdate drops status fields of a disabled feature and
// applies the defaults.
func (s Strategy) PrepareForStatusUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForStatusUpdate(ctx, obj, old)
	dropDisabledFields(obj.(*storagev1.CSINode), old.(*storagev1.CSINode))
}

// dropDisabledFields clears status.storageHealth unless the CSIVolumeHealth
// gate (alpha, off by default) is on or the stored object already has it,
// as upstream's dropDisabledCSINodeFields does.
func dropDisabledFields(n, old *storagev1.CSINode) {
	if utilfeature.DefaultFeatureGate.Enabled(features.CSIVolumeHealth) {
		return
	}
	if old == nil || len(old.Status.StorageHealth) == 0 {
		n.Status.StorageHealth = nil
	}
}
