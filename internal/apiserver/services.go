package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/internal/ipalloc"
)

// validateService checks the Service fields dnsplane relies on.
func validateService(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	case corev1.ServiceTypeExternalName:
		if svc.Spec.ExternalName == "" {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		}
		if svc.Spec.ClusterIP != "" {
			errs = append(errs, field.Forbidden(spec.Child("clusterIP"), "may not be set for ExternalName services"))
		}
	default:
		errs = append(errs, field.NotSupported(spec.Child("type"), svc.Spec.Type,
			[]corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort}))
	}
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone && net.ParseIP(ip) == nil {
		errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), ip, "must be empty, 'None', or a valid IP address"))
	}
	for i, p := range svc.Spec.Ports {
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, field.Invalid(spec.Child("ports").Index(i).Child("port"), p.Port, "must be between 1 and 65535, inclusive"))
		}
		if len(svc.Spec.Ports) > 1 && p.Name == "" {
			errs = append(errs, field.Required(spec.Child("ports").Index(i).Child("name"), ""))
		}
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone && len(svc.Spec.Ports) == 0 {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	return errs
}

// allocateClusterIP gives a Service its cluster IP: kept on update (the field
// is immutable), allocated on create unless the Service is headless or an
// ExternalName. Allocation records live in etcd, so several API servers never
// hand out the same address.
func (s *Server) allocateClusterIP(ctx context.Context, svc, old *corev1.Service, dryRun bool) (func(), error) {
	noop := func() {}
	spec := &svc.Spec
	ipsPath := field.NewPath("spec", "clusterIPs")
	if old != nil {
		if spec.ClusterIP == "" {
			spec.ClusterIP, spec.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
		}
		if spec.ClusterIP != old.Spec.ClusterIP && spec.Type != corev1.ServiceTypeExternalName && old.Spec.Type != corev1.ServiceTypeExternalName {
			return noop, s.invalidService(svc, field.ErrorList{field.Invalid(ipsPath.Index(0), spec.ClusterIP, "may not change once set")})
		}
		if spec.ClusterIP == old.Spec.ClusterIP {
			return noop, nil
		}
	}
	switch {
	case spec.Type == corev1.ServiceTypeExternalName:
		spec.ClusterIPs = nil
		return noop, nil
	case spec.ClusterIP == corev1.ClusterIPNone:
		spec.ClusterIPs = []string{corev1.ClusterIPNone}
		return noop, nil
	}
	if s.ips == nil {
		return noop, nil
	}
	owner := "services/" + svc.Namespace + "/" + svc.Name
	var ip net.IP
	if spec.ClusterIP == "" {
		if dryRun {
			// A dry run must not hold an address; the answer shows none.
			return noop, nil
		}
		got, err := s.ips.Allocate(ctx, owner)
		if err != nil {
			if errors.Is(err, ipalloc.ErrFull) {
				// Upstream's answer: a server-side failure, not the
				// client's fault.
				return noop, apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", ipalloc.ErrFull))
			}
			return noop, fmt.Errorf("allocating a cluster IP for %s: %w", owner, err)
		}
		ip = got
	} else {
		ip = net.ParseIP(spec.ClusterIP)
		if !dryRun {
			if err := s.ips.AllocateSpecific(ctx, ip, owner); err != nil {
				switch {
				case errors.Is(err, ipalloc.ErrAllocated):
					// Upstream's text; the owner stays out of the answer, it
					// may be in a namespace the caller cannot see.
					return noop, s.invalidService(svc, field.ErrorList{field.Invalid(ipsPath, []string{spec.ClusterIP}, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", spec.ClusterIP))})
				case errors.Is(err, ipalloc.ErrNotInRange):
					return noop, s.invalidService(svc, field.ErrorList{field.Invalid(ipsPath, []string{spec.ClusterIP}, fmt.Sprintf("failed to allocate IP %s: %v", spec.ClusterIP, err))})
				}
				return noop, fmt.Errorf("allocating cluster IP %s for %s: %w", ip, owner, err)
			}
		}
	}
	spec.ClusterIP = ip.String()
	spec.ClusterIPs = []string{spec.ClusterIP}
	if len(spec.IPFamilies) == 0 {
		if ip.To4() != nil {
			spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		} else {
			spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		}
	}
	if spec.IPFamilyPolicy == nil {
		single := corev1.IPFamilyPolicySingleStack
		spec.IPFamilyPolicy = &single
	}
	if dryRun {
		return noop, nil
	}
	return func() { _ = s.ips.Release(context.WithoutCancel(ctx), ip) }, nil
}

func (s *Server) invalidService(svc *corev1.Service, errs field.ErrorList) error {
	res, _ := s.reg.ByKind(corev1.SchemeGroupVersion.WithKind("Service"))
	return invalid(res, svc.Name, errs)
}

func (s *Server) releaseClusterIPs(ctx context.Context, svc *corev1.Service) {
	if s.ips == nil {
		return
	}
	for _, a := range svc.Spec.ClusterIPs {
		if ip := net.ParseIP(a); ip != nil && s.ips.Range().Contains(ip) {
			if err := s.ips.Release(ctx, ip); err != nil {
				s.log.Error("releasing cluster IP", "service", svc.Namespace+"/"+svc.Name, "ip", a, "err", err)
			}
		}
	}
}
