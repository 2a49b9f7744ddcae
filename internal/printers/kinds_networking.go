package printers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The networking.k8s.io/v1 kinds, with kube-apiserver's columns and cells
// (k8s.io/kubernetes pkg/printers/internalversion).
var (
	ingressKind       = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	ingressClassKind  = schema.GroupKind{Group: "networking.k8s.io", Kind: "IngressClass"}
	networkPolicyKind = schema.GroupKind{Group: "networking.k8s.io", Kind: "NetworkPolicy"}
	serviceCIDRKind   = schema.GroupKind{Group: "networking.k8s.io", Kind: "ServiceCIDR"}
	ipAddressKind     = schema.GroupKind{Group: "networking.k8s.io", Kind: "IPAddress"}
)

func ingressPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
			colPlain("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
			colPlain("Address", "string", "Address is a list containing ingress points for the load-balancer"),
			colPlain("Ports", "string", "Ports of TLS configurations that open"),
			colAge(),
		},
		func(o *networkingv1.Ingress, now time.Time) []any {
			// Upstream's PORTS are the ports an ingress controller
			// conventionally opens, not read from the spec.
			ports := "80"
			if len(o.Spec.TLS) > 0 {
				ports = "80, 443"
			}
			return []any{o.Name, derefOr(o.Spec.IngressClassName, "<none>"), printIngressHosts(o.Spec.Rules),
				printIngressAddress(o.Status.LoadBalancer), ports, cellAge(o.CreationTimestamp, now)}
		},
	)
}

// printIngressHosts lists the rules' hosts, up to three; once three are
// listed and rules remain, it ends with how many rules there are beyond
// three (upstream counts rules, not hosts). "*" when no rule names a host.
func printIngressHosts(rules []networkingv1.IngressRule) string {
	const shown = 3
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == shown {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	s := strings.Join(hosts, ",")
	if more {
		s += fmt.Sprintf(" + %d more...", len(rules)-shown)
	}
	return s
}

// printIngressAddress is the load balancer's IPs or else hostnames, sorted
// and each once. kube-apiserver prints the -o wide cell, so unclipped.
func printIngressAddress(lb networkingv1.IngressLoadBalancerStatus) string {
	var addrs []string
	for _, in := range lb.Ingress {
		if a := cellFirstNonEmpty(in.IP, in.Hostname); a != "" {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	return strings.Join(slices.Compact(addrs), ",")
}

// ingressClassPrinter prints an IngressClass, its name marked "(default)"
// when annotated as the default class.
func ingressClassPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Controller", "string", "Controller that is responsible for handling this class"),
			colPlain("Parameters", "string", "A reference to a resource with additional parameters"),
			colAge(),
		},
		func(o *networkingv1.IngressClass, now time.Time) []any {
			name := o.Name
			if o.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
				name += " (default)"
			}
			parameters := "<none>"
			if p := o.Spec.Parameters; p != nil {
				parameters = p.Kind
				if p.APIGroup != nil {
					parameters += "." + *p.APIGroup
				}
				parameters += "/" + p.Name
			}
			return []any{name, o.Spec.Controller, parameters, cellAge(o.CreationTimestamp, now)}
		},
	)
}

func networkPolicyPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Pod-Selector", "string", networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]),
			colAge(),
		},
		func(o *networkingv1.NetworkPolicy, now time.Time) []any {
			return []any{o.Name, metav1.FormatLabelSelector(&o.Spec.PodSelector), cellAge(o.CreationTimestamp, now)}
		},
	)
}

func serviceCIDRPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("CIDRs", "string", networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
			colAge(),
		},
		func(o *networkingv1.ServiceCIDR, now time.Time) []any {
			return []any{o.Name, strings.Join(o.Spec.CIDRs, ","), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// ipAddressPrinter prints an IPAddress. Upstream's row has an age after
// its two columns, which no column announces (kubectl ignores it);
// dnsplane prints what kube-apiserver prints.
func ipAddressPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("ParentRef", "string", networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
		},
		func(o *networkingv1.IPAddress, now time.Time) []any {
			parent := "<none>"
			if p := o.Spec.ParentRef; p != nil {
				parent = strings.ToLower(schema.GroupResource{Group: p.Group, Resource: p.Resource}.String())
				if p.Namespace != "" {
					parent += "/" + p.Namespace
				}
				parent += "/" + p.Name
			}
			return []any{o.Name, parent, cellAge(o.CreationTimestamp, now)}
		},
	)
}
