package admission

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/apis/certificates"

	"github.com/dnsplane/dnsplane/internal/admission/certadmission"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// certificatesPlugin hosts kube-apiserver's certificate plugins
// (CertificateApproval, CertificateSigning, ClusterTrustBundleAttest,
// CertificateSubjectRestriction: internal/registry/certificates/
// certadmission) on upstream's internal objects: CSR creates, writes
// through certificatesigningrequests/approval and /status, and
// ClusterTrustBundle creates and updates.
type certificatesPlugin struct {
	*kadmission.Handler
	certs *certadmission.Admission
}

var _ kadmission.ValidationInterface = certificatesPlugin{}

func newCertificates(certs *certadmission.Admission) kadmission.Interface {
	return certificatesPlugin{Handler: kadmission.NewHandler(kadmission.Create, kadmission.Update), certs: certs}
}

// Validate converts the objects and runs the plugins.
func (p certificatesPlugin) Validate(ctx context.Context, a kadmission.Attributes, _ kadmission.ObjectInterfaces) error {
	var obj, old runtime.Object
	var err error
	switch o := a.GetObject().(type) {
	case *certificatesv1.CertificateSigningRequest:
		obj, err = internal(o, &certificates.CertificateSigningRequest{})
		if err == nil && a.GetOldObject() != nil {
			old, err = internal(a.GetOldObject(), &certificates.CertificateSigningRequest{})
		}
	case *certificatesv1.ClusterTrustBundle:
		if a.GetSubresource() != "" {
			return nil
		}
		obj, err = internal(o, &certificates.ClusterTrustBundle{})
		if err == nil && a.GetOldObject() != nil {
			old, err = internal(a.GetOldObject(), &certificates.ClusterTrustBundle{})
		}
	default:
		return nil
	}
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("certificate admission: %w", err))
	}
	return p.certs.Validate(ctx, certadmission.Attributes{Operation: a.GetOperation(), Resource: a.GetResource(),
		Subresource: a.GetSubresource(), Name: objectName(a), Object: obj, OldObject: old})
}

// internal converts a served k8s.io/api object into out, its upstream
// internal type.
func internal(in runtime.Object, out runtime.Object) (runtime.Object, error) {
	if err := upstream.Convert(in, out); err != nil {
		return nil, err
	}
	return out, nil
}
