// Package secret is the strategy of core/v1 Secrets, which clients select
// by type (kubectl, and controllers that look for service account tokens).
package secret

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Strategy is the Secret strategy.
type Strategy struct{ rest.Default }

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
