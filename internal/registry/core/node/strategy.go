// Package node is the strategy of core/v1 Nodes: upstream's defaulting and
// validation (pkg/registry/core/node/strategy.go); a node registers with its
// status (kubelet creates the Node with addresses and conditions), and
// kubectl selects nodes by spec.unschedulable.
package node

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/features"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the Node strategy.
type Strategy struct{ upstream.Strategy[core.Node] }

var (
	_ rest.Strategy        = Strategy{}
	_ rest.StatusStrategy  = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// New returns the Node strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[core.Node]{
		Default: rest.Default{Status: true},
		Rules: upstream.Rules[core.Node]{
			Validate: corevalidation.ValidateNode,
			ValidateUpdate: func(n, old *core.Node) field.ErrorList {
				return append(corevalidation.ValidateNode(n), corevalidation.ValidateNodeUpdate(n, old)...)
			},
			ValidateStatusUpdate: corevalidation.ValidateNodeUpdate,
			DeclarativeOptions: func() map[string]bool {
				return map[string]bool{string(features.InPlacePodVerticalScalingSchedulerPreemption): utilfeature.DefaultFeatureGate.Enabled(features.InPlacePodVerticalScalingSchedulerPreemption)}
			},
		},
	}}
}

// PrepareForCreate applies the defaults and keeps the status: unlike most
// kinds, a Node is created with it.
func (s Strategy) PrepareForCreate(_ context.Context, obj any) { s.ApplyDefaults(obj) }

// SelectableFields are the node fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"spec.unschedulable"} }

// FieldSet returns the selectable fields of a node.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"spec.unschedulable": strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)}
}
