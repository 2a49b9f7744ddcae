package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

var csrKind = schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}

// certificateSigningRequestPrinter prints certificates.k8s.io/v1
// CertificateSigningRequests with upstream's handler (upstreamPrinter).
func certificateSigningRequestPrinter() Printer { return upstreamPrinter(csrKind) }
