// Package podcertificaterequest is the strategy of certificates.k8s.io/v1
// PodCertificateRequests (GA and on by default in 1.37): upstream's
// defaulting and validation (pkg/registry/certificates/podcertificaterequest/
// strategy.go). A /status write that changes the status is checked by
// upstream's own status strategy, which asks the authorizer whether the
// writer may "sign" for the request's signer (docs/apiserver.md#certificate-
// admission). Nothing in dnsplane issues pod certificates.
package podcertificaterequest

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/kubernetes/pkg/apis/certificates"
	certificatesvalidation "k8s.io/kubernetes/pkg/apis/certificates/validation"
	upstreampcr "k8s.io/kubernetes/pkg/registry/certificates/podcertificaterequest"
	"k8s.io/utils/clock"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// Strategy is the PodCertificateRequest strategy.
type Strategy struct {
	upstream.Strategy[certificates.PodCertificateRequest]
	// status is upstream's status strategy, holding the authorizer; nil
	// when the server has no authorization.
	status *upstreampcr.StatusStrategy
}

var (
	_ rest.Strategy        = Strategy{}
	_ rest.StatusStrategy  = Strategy{}
	_ rest.Declarative     = Strategy{}
	_ rest.FieldSelectable = Strategy{}
)

// New returns the PodCertificateRequest strategy; c is the clock status
// writes' certificate lifetimes are checked against, a the authorizer of
// their "sign" check (nil checks none, for servers without authorization).
func New(c clock.PassiveClock, a authorizer.Authorizer) Strategy {
	var status *upstreampcr.StatusStrategy
	if a != nil {
		status = upstreampcr.NewStatusStrategy(upstreampcr.NewStrategy(), a, c)
	}
	return Strategy{status: status, Strategy: upstream.Strategy[certificates.PodCertificateRequest]{
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

// ValidateStatusUpdate is upstream's status strategy's ValidateUpdate when
// the write has a user: the status rules, then "sign" on the signer for a
// write that changes the status. The server's own writes (no user) get the
// status rules only, as kube-apiserver's loopback client would pass.
func (s Strategy) ValidateStatusUpdate(ctx context.Context, obj, old any) field.ErrorList {
	u, ok := authn.UserFrom(ctx)
	if s.status == nil || !ok {
		return s.Strategy.ValidateStatusUpdate(ctx, obj, old)
	}
	var in, o certificates.PodCertificateRequest
	if err := upstream.Convert(obj.(*certificatesv1.PodCertificateRequest), &in); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if err := upstream.Convert(old.(*certificatesv1.PodCertificateRequest), &o); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return s.status.ValidateUpdate(genericapirequest.WithUser(ctx, authz.UserInfo(u)), &in, &o)
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
