// Package certadmission hosts kube-apiserver's certificate admission
// plugins, all on by default in kube-apiserver 1.37
// (plugin/pkg/admission/certificates): CertificateApproval and
// CertificateSigning (an approval or a certificate needs "approve" or
// "sign" on the CSR's signer), CertificateSubjectRestriction (no
// kubernetes.io/kube-apiserver-client CSR for system:masters) and
// ClusterTrustBundleAttest ("attest" on a bundle's signer). Without them any
// user allowed to update certificatesigningrequests/approval could approve
// a cluster-admin client certificate for itself (issue 22;
// docs/apiserver.md#certificate-admission). The plugins are upstream's own
// objects; the kinds' strategies call Validate with upstream's internal
// objects.
package certadmission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/approval"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/ctbattest"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/signing"
	"k8s.io/kubernetes/plugin/pkg/admission/certificates/subjectrestriction"

	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
)

// Admission runs the certificate admission plugins. The zero value runs
// none; use New.
type Admission struct {
	plugins []admission.ValidationInterface
}

// New returns the plugins kube-apiserver enables by default. The three
// that ask the authorizer about signers run only with a (nil means a
// server without authorization, where every user may do everything
// anyway); CertificateSubjectRestriction needs none and always runs.
// gates are kube's feature gates (ClusterTrustBundleAttest reads
// ClusterTrustBundle from them). Each plugin gets what its
// ValidateInitialization asks for here, so none is left uninitialised.
func New(a authorizer.Authorizer, gates featuregate.FeatureGate) *Admission {
	plugins := []admission.ValidationInterface{subjectrestriction.NewPlugin()}
	if a != nil {
		ap, sp, cp := approval.NewPlugin(), signing.NewPlugin(), ctbattest.NewPlugin()
		ap.SetUnconditionalAuthorizer(a)
		sp.SetUnconditionalAuthorizer(a)
		cp.SetUnconditionalAuthorizer(a)
		cp.InspectFeatureGates(gates)
		plugins = append(plugins, ap, sp, cp)
	}
	return &Admission{plugins: plugins}
}

// Attributes are one write as the plugins see it.
type Attributes struct {
	Operation   admission.Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Name        string
	// Object and OldObject are upstream's internal objects
	// (k8s.io/kubernetes/pkg/apis/certificates); OldObject is nil on create.
	Object, OldObject runtime.Object
}

// Validate refuses the write with upstream's 403 when a plugin refuses it.
// Writes with no user in ctx are the server's own and are not checked, as
// kube-apiserver's loopback client is system:masters.
func (p *Admission) Validate(ctx context.Context, in Attributes) error {
	if p == nil {
		return nil
	}
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return nil
	}
	a := admission.NewAttributesRecord(in.Object, in.OldObject, schema.GroupVersionKind{}, "", in.Name,
		in.Resource, in.Subresource, in.Operation, nil, false, authz.UserInfo(u))
	for _, plugin := range p.plugins {
		if !plugin.Handles(in.Operation) {
			continue
		}
		if err := plugin.Validate(ctx, a, nil); err != nil {
			return err
		}
	}
	return nil
}
