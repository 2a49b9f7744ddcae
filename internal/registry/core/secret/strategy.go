// Package secret is the strategy of core/v1 Secrets: upstream's defaulting
// and validation (pkg/registry/core/secret/strategy.go); clients select
// secrets by type (kubectl, and controllers that look for service account
// tokens).
package secret

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the Secret strategy.
type Strategy struct{ upstream.Strategy[core.Secret] }

// New returns the Secret strategy.
func New() Strategy {
	return Strategy{upstream.Strategy[core.Secret]{
		Default: rest.Default{Namespaced: true},
		Rules:   upstream.Rules[core.Secret]{Validate: corevalidation.ValidateSecret, ValidateUpdate: corevalidation.ValidateSecretUpdate},
	}}
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// SelectableFields are the secret fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"type"} }

// FieldSet returns the selectable fields of a secret.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"type": string(obj.(*corev1.Secret).Type)}
}
