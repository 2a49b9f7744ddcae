// Package persistentvolume is the strategy of core/v1 PersistentVolumes:
// upstream's defaulting and validation (pkg/registry/core/persistentvolume/
// strategy.go). A new volume starts Pending with its phase transition time
// set, and the time moves whenever a /status write changes the phase, as
// kube-apiserver's strategy does it; dnsplane runs no volume binder, so
// nothing else moves the phase (docs/apiserver.md).
package persistentvolume

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	volumevalidation "k8s.io/kubernetes/pkg/volume/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the PersistentVolume strategy.
type Strategy struct {
	upstream.Strategy[core.PersistentVolume]
	// Now is the clock of status.lastPhaseTransitionTime.
	Now func() time.Time
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
	_ rest.Declarative    = Strategy{}
)

// New returns the PersistentVolume strategy.
func New() Strategy {
	return Strategy{
		Strategy: upstream.Strategy[core.PersistentVolume]{
			Default: rest.Default{Status: true, ReturnDeletedObject: true},
			Rules: upstream.Rules[core.PersistentVolume]{
				Validate:             validate,
				ValidateUpdate:       validateUpdate,
				ValidateStatusUpdate: corevalidation.ValidatePersistentVolumeStatusUpdate,
			},
		},
		Now: time.Now,
	}
}

// validate is what upstream's Validate calls: the API rules and the volume
// plugins' own (pkg/volume/validation).
func validate(pv *core.PersistentVolume) field.ErrorList {
	opts := corevalidation.ValidationOptionsForPersistentVolume(pv, nil)
	errs := corevalidation.ValidatePersistentVolume(pv, opts)
	return append(errs, volumevalidation.ValidatePersistentVolume(pv)...)
}

func validateUpdate(pv, old *core.PersistentVolume) field.ErrorList {
	opts := corevalidation.ValidationOptionsForPersistentVolume(pv, old)
	errs := corevalidation.ValidatePersistentVolume(pv, opts)
	errs = append(errs, volumevalidation.ValidatePersistentVolume(pv)...)
	return append(errs, corevalidation.ValidatePersistentVolumeUpdate(pv, old, opts)...)
}

// PrepareForCreate clears the status and starts the volume Pending, with
// the transition time of that phase.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	pv := obj.(*corev1.PersistentVolume)
	now := metav1.NewTime(s.Now())
	pv.Status.Phase = corev1.VolumePending
	pv.Status.LastPhaseTransitionTime = &now
}

// PrepareForStatusUpdate keeps the transition time when the phase stays
// and sets it when the phase changes and the client did not set a new one.
func (s Strategy) PrepareForStatusUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForStatusUpdate(ctx, obj, old)
	pv, o := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	switch {
	case pv.Status.Phase == o.Status.Phase && pv.Status.LastPhaseTransitionTime == nil:
		pv.Status.LastPhaseTransitionTime = o.Status.LastPhaseTransitionTime
	case pv.Status.Phase != o.Status.Phase &&
		(pv.Status.LastPhaseTransitionTime == nil || pv.Status.LastPhaseTransitionTime.Equal(o.Status.LastPhaseTransitionTime)):
		now := metav1.NewTime(s.Now())
		pv.Status.LastPhaseTransitionTime = &now
	}
}
