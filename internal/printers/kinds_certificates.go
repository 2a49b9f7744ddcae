package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

// The certificates.k8s.io/v1 kinds, printed by upstream's handlers
// (upstreamPrinter).
var (
	csrKind                   = schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}
	podCertificateRequestKind = schema.GroupKind{Group: "certificates.k8s.io", Kind: "PodCertificateRequest"}
	clusterTrustBundleKind    = schema.GroupKind{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}
)

func certificateSigningRequestPrinter() Printer { return upstreamPrinter(csrKind) }
func podCertificateRequestPrinter() Printer     { return upstreamPrinter(podCertificateRequestKind) }
func clusterTrustBundlePrinter() Printer        { return upstreamPrinter(clusterTrustBundleKind) }
