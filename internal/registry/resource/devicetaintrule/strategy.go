// Package devicetaintrule is the strategy of resource.k8s.io/v1
// DeviceTaintRules: cluster-scoped, with a status subresource, upstream's
// defaulting and validation (pkg/registry/resource/devicetaintrule/strategy.go),
// and, as there, a taint whose effect changes is stamped with a new
// timeAdded unless the update sets one.
package devicetaintrule

import (
	"context"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the DeviceTaintRule strategy.
type Strategy struct {
	upstream.Strategy[resource.DeviceTaintRule]
	// Now is the clock of timeAdded.
	Now func() time.Time
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
)

// New returns the DeviceTaintRule strategy.
func New() Strategy {
	return Strategy{
		Strategy: upstream.Strategy[resource.DeviceTaintRule]{
			Default: rest.Default{Status: true},
			Rules: upstream.Rules[resource.DeviceTaintRule]{
				Validate:             resourcevalidation.ValidateDeviceTaintRule,
				ValidateUpdate:       resourcevalidation.ValidateDeviceTaintRuleUpdate,
				ValidateStatusUpdate: resourcevalidation.ValidateDeviceTaintRuleStatusUpdate,
			},
		},
		Now: time.Now,
	}
}

// PrepareForUpdate keeps the stored status, restamps timeAdded when the
// effect changed and the update kept the old timeAdded (consumers compare
// it to when they saw the taint), and applies the defaults.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	r, o := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
	if r.Spec.Taint.Effect != o.Spec.Taint.Effect && r.Spec.Taint.TimeAdded.Equal(o.Spec.Taint.TimeAdded) {
		r.Spec.Taint.TimeAdded = &metav1.Time{Time: s.Now().Truncate(time.Second)}
	}
}
