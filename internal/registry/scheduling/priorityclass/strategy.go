// Package priorityclass is the strategy of scheduling.k8s.io/v1
// PriorityClasses: upstream's defaulting and validation
// (pkg/registry/scheduling/priorityclass/strategy.go), and the rule of its
// storage that the built-in classes (system-cluster-critical,
// system-node-critical), which every API server creates at start
// (internal/controlplane's bootstrap, as kube-apiserver's
// AddSystemPriorityClasses post-start hook), cannot be deleted. Their value
// cannot change either: upstream's validation reserves the system- prefix
// for them with their values, and refuses a value change on update.
package priorityclass

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	schedulingv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	schedulingvalidation "k8s.io/kubernetes/pkg/apis/scheduling/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the PriorityClass strategy.
type Strategy struct {
	upstream.Strategy[scheduling.PriorityClass]
}

var (
	_ rest.Strategy    = Strategy{}
	_ rest.DeleteHook  = Strategy{}
	_ rest.Declarative = Strategy{}
)

// New returns the PriorityClass strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[scheduling.PriorityClass]{
		Rules: upstream.Rules[scheduling.PriorityClass]{
			Validate:       schedulingvalidation.ValidatePriorityClass,
			ValidateUpdate: schedulingvalidation.ValidatePriorityClassUpdate,
		},
	}}
}

// CheckDelete refuses to delete a built-in class with kube-apiserver's 403
// (pkg/registry/scheduling/priorityclass/storage, REST.Delete).
func (Strategy) CheckDelete(name string) error {
	for _, system := range schedulingv1.SystemPriorityClassNames() {
		if name == system {
			return apierrors.NewForbidden(scheduling.Resource("priorityclasses"), name, errors.New("this is a system priority class and cannot be deleted"))
		}
	}
	return nil
}
