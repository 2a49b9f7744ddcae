package apiserver

import (
	"context"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// systemNamespaces exist from the first start, as in a new cluster.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "dnsplane-system"}

// Bootstrap creates what a new cluster has: the system namespaces and the
// kubernetes Service in default, with the first address of the service range.
// It is idempotent, so every start (and every API server of several) runs it.
func (s *Server) Bootstrap(ctx context.Context) error {
	nsRes, _ := s.reg.ByKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	for _, name := range systemNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := s.createIfAbsent(ctx, nsRes, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	if s.ips == nil {
		return nil
	}
	first := firstAddress(s.ips.Range())
	svcRes, _ := s.reg.ByKind(corev1.SchemeGroupVersion.WithKind("Service"))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: first.String(),
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromInt(s.cfg.SecurePort)}},
		},
	}
	if err := s.createIfAbsent(ctx, svcRes, svc); err != nil {
		return fmt.Errorf("creating the kubernetes service: %w", err)
	}
	return nil
}

func (s *Server) createIfAbsent(ctx context.Context, res *Resource, obj any) error {
	m := accessor(obj)
	if _, err := s.store.Get(ctx, storageKey(res, m.GetNamespace(), m.GetName())); err == nil {
		return nil
	}
	setTypeMeta(res, obj)
	initMetadata(obj, s.now())
	prepareCreate(res, obj)
	_, err := s.persist(ctx, res, obj, nil, false)
	if err != nil {
		// Another API server may have created it (and taken its cluster IP)
		// first; that is success.
		if _, getErr := s.store.Get(ctx, storageKey(res, m.GetNamespace(), m.GetName())); getErr == nil {
			return nil
		}
	}
	return err
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
