// Package node is the strategy of core/v1 Nodes: a node registers with its
// status (kubelet creates the Node with addresses and conditions), and
// kubectl selects nodes by spec.unschedulable.
package node

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Strategy is the Node strategy.
type Strategy struct{ rest.Default }

var (
	_ rest.Strategy        = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// New returns the Node strategy.
func New() Strategy { return Strategy{rest.Default{Status: true}} }

// PrepareForCreate keeps the status: unlike most kinds, a Node is created
// with it.
func (Strategy) PrepareForCreate(context.Context, any) {}

// SelectableFields are the node fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"spec.unschedulable"} }

// FieldSet returns the selectable fields of a node.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"spec.unschedulable": strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)}
}
