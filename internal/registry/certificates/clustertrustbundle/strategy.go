// Package clustertrustbundle is the strategy of certificates.k8s.io/v1
// ClusterTrustBundles (GA and on by default in 1.37): upstream's defaulting
// and validation (pkg/registry/certificates/clustertrustbundle/strategy.go),
// cluster-scoped, selectable by signer; a bundle naming a signer needs
// "attest" on it (ClusterTrustBundleAttest, internal/registry/certificates/
// certadmission). kube-controller-manager's publisher
// of the cluster's own bundle needs signing keys dnsplane does not give it.
package clustertrustbundle

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/apis/certificates"
	certificatesvalidation "k8s.io/kubernetes/pkg/apis/certificates/validation"

	"github.com/dnsplane/dnsplane/internal/registry/certificates/certadmission"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the ClusterTrustBundle strategy.
type Strategy struct {
	upstream.Strategy[certificates.ClusterTrustBundle]
	// Admission is kube-apiserver's certificate admission; nil admits
	// everything.
	Admission *certadmission.Admission
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.Declarative     = Strategy{}
	_ rest.FieldSelectable = Strategy{}

	_ rest.ValidatingAdmitter = Strategy{}
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

// WithAdmission returns s checked by a's certificate admission plugins.
func (s Strategy) WithAdmission(a *certadmission.Admission) Strategy {
	s.Admission = a
	return s
}

// resource is the resource the admission plugins match on.
var resource = certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles")

// ValidateAdmission runs ClusterTrustBundleAttest on a create or update
// of the main resource (the kind has no subresources).
func (s Strategy) ValidateAdmission(ctx context.Context, obj, old any) error {
	if s.Admission == nil {
		return nil
	}
	in := certadmission.Attributes{Operation: admission.Create, Resource: resource, Name: obj.(*certificatesv1.ClusterTrustBundle).Name}
	var b certificates.ClusterTrustBundle
	if err := upstream.Convert(obj.(*certificatesv1.ClusterTrustBundle), &b); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("certificate admission: %w", err))
	}
	in.Object = &b
	if old != nil {
		var o certificates.ClusterTrustBundle
		if err := upstream.Convert(old.(*certificatesv1.ClusterTrustBundle), &o); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("certificate admission: %w", err))
		}
		in.Operation, in.OldObject = admission.Update, &o
	}
	return s.Admission.Validate(ctx, in)
}

// SelectableFields are the fields upstream accepts in a fieldSelector.
func (Strategy) SelectableFields() []string { return []string{"spec.signerName"} }

// FieldSet returns the selectable fields of a bundle.
func (Strategy) FieldSet(obj any) fields.Set {
	return fields.Set{"spec.signerName": obj.(*certificatesv1.ClusterTrustBundle).Spec.SignerName}
}
