package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

// The networking.k8s.io/v1 kinds, printed by upstream's handlers
// (upstreamPrinter).
var (
	ingressKind       = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	ingressClassKind  = schema.GroupKind{Group: "networking.k8s.io", Kind: "IngressClass"}
	networkPolicyKind = schema.GroupKind{Group: "networking.k8s.io", Kind: "NetworkPolicy"}
	serviceCIDRKind   = schema.GroupKind{Group: "networking.k8s.io", Kind: "ServiceCIDR"}
	ipAddressKind     = schema.GroupKind{Group: "networking.k8s.io", Kind: "IPAddress"}
)

func ingressPrinter() Printer       { return upstreamPrinter(ingressKind) }
func ingressClassPrinter() Printer  { return upstreamPrinter(ingressClassKind) }
func networkPolicyPrinter() Printer { return upstreamPrinter(networkPolicyKind) }
func serviceCIDRPrinter() Printer   { return upstreamPrinter(serviceCIDRKind) }
func ipAddressPrinter() Printer     { return upstreamPrinter(ipAddressKind) }
