// Package persistentvolumeclaim is the strategy of core/v1
// PersistentVolumeClaims: upstream's defaulting and validation
// (pkg/registry/core/persistentvolumeclaim/strategy.go), with the data
// source normalisation of KEP-1495 (spec.dataSource and spec.dataSourceRef
// filled from each other) that its PrepareForCreate and PrepareForUpdate
// apply, done by upstream's pkg/api/persistentvolumeclaim on the internal
// type. dnsplane provisions no storage: claims stay Pending
// (docs/apiserver.md).
package persistentvolumeclaim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	pvcutil "k8s.io/kubernetes/pkg/api/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the PersistentVolumeClaim strategy.
type Strategy struct {
	upstream.Strategy[core.PersistentVolumeClaim]
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
	_ rest.Declarative    = Strategy{}
)

// New returns the PersistentVolumeClaim strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[core.PersistentVolumeClaim]{
		Default: rest.Default{Status: true, Namespaced: true, ReturnDeletedObject: true},
		Rules: upstream.Rules[core.PersistentVolumeClaim]{
			Validate: func(pvc *core.PersistentVolumeClaim) field.ErrorList {
				return corevalidation.ValidatePersistentVolumeClaim(pvc, corevalidation.ValidationOptionsForPersistentVolumeClaim(pvc, nil))
			},
			ValidateUpdate: func(pvc, old *core.PersistentVolumeClaim) field.ErrorList {
				return corevalidation.ValidatePersistentVolumeClaimUpdate(pvc, old, corevalidation.ValidationOptionsForPersistentVolumeClaim(pvc, old))
			},
			ValidateStatusUpdate: func(pvc, old *core.PersistentVolumeClaim) field.ErrorList {
				return corevalidation.ValidatePersistentVolumeClaimStatusUpdate(pvc, old, corevalidation.ValidationOptionsForPersistentVolumeClaim(pvc, old))
			},
		},
	}}
}

// PrepareForCreate clears the status, applies the defaults and normalises
// the data sources.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	pvc := obj.(*corev1.PersistentVolumeClaim)
	normalize(pvc, nil)
}

// PrepareForUpdate keeps the status, applies the defaults and normalises
// the data sources against the stored claim's, as upstream does.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	normalize(obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim))
}

// normalize runs upstream's data source rules on the internal form of
// pvc's spec and writes the result back. A claim that does not convert is
// left alone: validation reports it.
func normalize(pvc, old *corev1.PersistentVolumeClaim) {
	var internal core.PersistentVolumeClaim
	if err := upstream.Convert(pvc, &internal); err != nil {
		return
	}
	var oldSpec *core.PersistentVolumeClaimSpec
	if old != nil {
		var o core.PersistentVolumeClaim
		if err := upstream.Convert(old, &o); err != nil {
			return
		}
		oldSpec = &o.Spec
	}
	pvcutil.DropDisabledFields(&internal.Spec, oldSpec)
	pvcutil.EnforceDataSourceBackwardsCompatibility(&internal.Spec, oldSpec)
	pvcutil.NormalizeDataSources(&internal.Spec)
	var out corev1.PersistentVolumeClaim
	if err := upstream.Convert(&internal, &out); err != nil {
		return
	}
	pvc.Spec = out.Spec
}
