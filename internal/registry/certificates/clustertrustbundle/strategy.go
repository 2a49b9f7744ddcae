// Package clustertrustbundle is the strategy of certificates.k8s.io/v1
// ClusterTrustBundles (GA and on by default in 1.37): upstream's defaulting
// and validation (pkg/registry/certificates/clustertrustbundle/strategy.go),
// cluster-scoped, selectable by signer; a bundle naming a signer needs
// "attest" on it (ClusterTrustBundleAttest, in the admission chain of
// internal/admission). kube-controller-manager's publisher
// of the cluster's own bundle needs signing keys dnsplane does not give it.
package clustertrustbundle

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/certificates"
	certificatesvalidation "k8s.io/kubernetes/pkg/apis/certificates/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the ClusterTrustBundle strategy.
type Strategy struct {
	upstream.Strategy[certificates.ClusterTrustBundle]
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.Declarative     = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// New returns the ClusterTrustBundle strategy.
func New() Strategy {
	return Strategy{Strategy: upstream.Strategy[certificates.ClusterTrustBundle]{
		Rules: upstream.Rules[certificates.ClusterTrustBundle]{
			Validate: func(b *certificates.ClusterTrustBundle) field.ErrorList {
				return certificatesvalidation.ValidateClusterTrustBundle(b, certificatesvalidation.ValidateClusterTrustBundleOptions{})
			},
			ValidateUpdate: certificatesvalidation.ValidateClusterTrustBundleUpdate,
		},
	}}
}

// SelectableFields are the fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"spec.signerName"} }

// FieldSet returns the selectable fields of a bundle.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"spec.signerName": obj.(*certificatesv1.ClusterTrustBundle).Spec.SignerName}
}
