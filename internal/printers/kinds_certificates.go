package printers

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// The certificates.k8s.io/v1 kinds, with kube-apiserver's columns and
// cells (k8s.io/kubernetes pkg/printers/internalversion).
var (
	csrKind                   = schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}
	podCertificateRequestKind = schema.GroupKind{Group: "certificates.k8s.io", Kind: "PodCertificateRequest"}
	clusterTrustBundleKind    = schema.GroupKind{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}
)

// certificateSigningRequestPrinter prints a CSR. Upstream describes its
// columns with the v1beta1 field documentation (REQUESTOR with the
// request's), which dnsplane keeps.
func certificateSigningRequestPrinter() Printer {
	spec := certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colAge(),
			colPlain("SignerName", "string", spec["signerName"]),
			colPlain("Requestor", "string", spec["request"]),
			colPlain("RequestedDuration", "string", spec["expirationSeconds"]),
			colPlain("Condition", "string", certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
		},
		func(o *certificatesv1.CertificateSigningRequest, now time.Time) []any {
			requested := "<none>"
			if s := o.Spec.ExpirationSeconds; s != nil {
				requested = duration.HumanDuration(time.Duration(*s) * time.Second)
			}
			return []any{o.Name, cellAge(o.CreationTimestamp, now), cellOrNone(o.Spec.SignerName), o.Spec.Username, requested, printCSRCondition(o)}
		},
	)
}

// printCSRCondition is Denied, Approved or Pending (Denied winning), then
// ",Failed" and ",Issued" when they apply. A condition counts whatever its
// status, as upstream's does.
func printCSRCondition(o *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range o.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	s := "Pending"
	switch {
	case denied:
		s = "Denied"
	case approved:
		s = "Approved"
	}
	if failed {
		s += ",Failed"
	}
	if len(o.Status.Certificate) > 0 {
		s += ",Issued"
	}
	return s
}

// podCertificateRequestPrinter prints a PodCertificateRequest; STATE is the
// last Issued, Denied or Failed condition, else Pending.
func podCertificateRequestPrinter() Printer {
	spec := certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("PodName", "string", spec["podName"]),
			colPlain("ServiceAccountName", "string", spec["serviceAccountName"]),
			colPlain("NodeName", "string", spec["nodeName"]),
			colPlain("SignerName", "string", spec["signerName"]),
			colPlain("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
			colPlain("UnverifiedUserAnnotations", "string", spec["unverifiedUserAnnotations"]),
		},
		func(o *certificatesv1.PodCertificateRequest, _ time.Time) []any {
			state := "Pending"
			for _, c := range o.Status.Conditions {
				switch c.Type {
				case certificatesv1.PodCertificateRequestConditionTypeIssued,
					certificatesv1.PodCertificateRequestConditionTypeDenied,
					certificatesv1.PodCertificateRequestConditionTypeFailed:
					state = c.Type
				}
			}
			return []any{o.Name, o.Spec.PodName, o.Spec.ServiceAccountName, string(o.Spec.NodeName), o.Spec.SignerName, state,
				labels.FormatLabels(o.Spec.UnverifiedUserAnnotations)}
		},
	)
}

// clusterTrustBundlePrinter: upstream's has no AGE column.
func clusterTrustBundlePrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{colName(), colPlain("SignerName", "string", certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"])},
		func(o *certificatesv1.ClusterTrustBundle, _ time.Time) []any {
			return []any{o.Name, cellOrNone(o.Spec.SignerName)}
		},
	)
}
