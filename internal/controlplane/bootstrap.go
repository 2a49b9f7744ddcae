package controlplane

import (
	"context"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"

	"github.com/dnsplane/dnsplane/internal/apiserver"
)

// SystemNamespaces are the namespaces that exist from the first start, as
// in a new cluster: the ones kube-apiserver creates itself (its
// kubernetesservice controller makes default; its systemnamespaces
// controller kube-system, kube-public and kube-node-lease, where the
// kubelets' and node agents' heartbeat Leases live,
// pkg/controlplane/controller/systemnamespaces) and dnsplane's own.
func SystemNamespaces() []string {
	return []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease, "dnsplane-system"}
}

// bootstrap creates what a new cluster has: the system namespaces, the
// kubernetes Service in default, with the first address of the service
// range, and the system priority classes. It is idempotent, so every start (and every API server of
// several) runs it.
func bootstrap(ctx context.Context, srv *apiserver.Server, serviceRange *net.IPNet, securePort int) error {
	for _, name := range SystemNamespaces() {
		ns := &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
		}
		if err := srv.EnsureObject(ctx, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: firstAddress(serviceRange).String(),
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromInt(securePort)}},
		},
	}
	if err := srv.EnsureObject(ctx, svc); err != nil {
		return fmt.Errorf("creating the kubernetes service: %w", err)
	}
	// The built-in priority classes, as kube-apiserver's
	// AddSystemPriorityClasses post-start hook creates them
	// (pkg/registry/scheduling/rest); their strategy refuses to delete them.
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		pc = pc.DeepCopy()
		pc.TypeMeta = metav1.TypeMeta{APIVersion: schedulingv1.SchemeGroupVersion.String(), Kind: "PriorityClass"}
		if err := srv.EnsureObject(ctx, pc); err != nil {
			return fmt.Errorf("creating priority class %s: %w", pc.Name, err)
		}
	}
	return nil
}

// firstAddress is the network address plus one: the kubernetes Service's IP
// in every cluster (10.96.0.1 for 10.96.0.0/12).
func firstAddress(n *net.IPNet) net.IP {
	ip := append(net.IP(nil), n.IP.Mask(n.Mask)...)
	for i := len(ip) - 1; i >= 0; i-- {
		ip[i]++
		if ip[i] != 0 {
			break
		}
	}
	return ip
}
