// Package podcertificaterequest is the strategy of certificates.k8s.io/v1
// PodCertificateRequests (GA and on by default in 1.37): upstream's
// defaulting and validation (pkg/registry/certificates/podcertificaterequest/
// strategy.go). Upstream's status strategy also asks the authorizer whether
// the writer may "sign" for the signer; dnsplane has no authorization
// (docs/apiserver.md), so every authenticated writer may. Nothing in
// dnsplane issues pod certificates.
package podcertificaterequest

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/certificates"
	certificatesvalidation "k8s.io/kubernetes/pkg/apis/certificates/validation"
	"k8s.io/utils/clock"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the PodCertificateRequest strategy.
type Strategy struct {
	upstream.Strategy[certificates.PodCertificateRequest]
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.StatusStrategy  = Strategy{}
	_ rest.Declarative     = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// New returns the PodCertificateRequest strategy; c is the clock status
// writes' certificate lifetimes are checked against.
func New(c clock.PassiveClock) Strategy {
	return Strategy{upstream.Strategy[certificates.PodCertificateRequest]{
		Default: rest.Default{Status: true, Namespaced: true},
		Rules: upstream.Rules[certificates.PodCertificateRequest]{
			Validate:       certificatesvalidation.ValidatePodCertificateRequestCreate,
			ValidateUpdate: certificatesvalidation.ValidatePodCertificateRequestUpdate,
			ValidateStatusUpdate: func(pcr, old *certificates.PodCertificateRequest) field.ErrorList {
				return certificatesvalidation.ValidatePodCertificateRequestStatusUpdate(pcr, old, c)
			},
		},
	}}
}

// SelectableFields are the fields upstream accepts in a fieldSelector (the
// kubelet watches its node's requests).
func (Strategy) SelectableFields() []string {
	return []string{"spec.signerName", "spec.podName", "spec.nodeName"}
}

// FieldSet returns the selectable fields of a request.
func (Strategy) FieldSet(obj any) fields.Set {
	pcr := obj.(*certificatesv1.PodCertificateRequest)
	return fields.Set{"spec.signerName": pcr.Spec.SignerName, "spec.podName": pcr.Spec.PodName, "spec.nodeName": string(pcr.Spec.NodeName)}
}
