// Package service is the strategy of core/v1 Services: DNS label names,
// upstream's Service spec defaults, the Service rules dnsplane relies on,
// and the cluster IP each Service holds in the service range
// (internal/ipalloc), reserved before the write and given back after a
// failed write or a delete.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/internal/defaulting"
	"github.com/dnsplane/dnsplane/internal/ipalloc"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Allocator hands out cluster IPs; *ipalloc.Allocator implements it.
type Allocator interface {
	Allocate(ctx context.Context, owner string) (net.IP, error)
	AllocateSpecific(ctx context.Context, ip net.IP, owner string) error
	Release(ctx context.Context, ip net.IP) error
	Range() *net.IPNet
}

// Strategy is the Service strategy.
type Strategy struct {
	rest.Default
	// IPs allocates cluster IPs; nil allocates none (dnsplane validate,
	// and API servers started without a service range in tests).
	IPs Allocator
	// Log reports cluster IPs that could not be given back; nil discards.
	Log *slog.Logger
}

var (
	_ rest.Strategy = Strategy{}
	_ rest.Reserver = Strategy{}
)

// New returns the Service strategy allocating from ips.
func New(ips Allocator, log *slog.Logger) Strategy {
	return Strategy{Default: rest.Default{Status: true}, IPs: ips, Log: log}
}

func (s Strategy) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// NameRule is upstream's: a Service name is a DNS-1035 label, because it
// becomes one in the Service's DNS name.
func (Strategy) NameRule() apivalidation.ValidateNameFunc { return apivalidation.NameIsDNS1035Label }

// PrepareForCreate clears the status and applies the spec defaults.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Default.PrepareForCreate(ctx, obj)
	defaulting.Service(&obj.(*corev1.Service).Spec)
}

// PrepareForUpdate keeps the stored status and applies the spec defaults.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Default.PrepareForUpdate(ctx, obj, old)
	defaulting.Service(&obj.(*corev1.Service).Spec)
}

// Validate checks a new Service.
func (Strategy) Validate(_ context.Context, obj any) field.ErrorList {
	return validate(obj.(*corev1.Service))
}

// ValidateUpdate checks a Service update; the cluster IP's immutability is
// checked when it is reserved.
func (Strategy) ValidateUpdate(_ context.Context, obj, _ any) field.ErrorList {
	return validate(obj.(*corev1.Service))
}

// Reserve gives the Service its cluster IP.
func (s Strategy) Reserve(ctx context.Context, obj, old any, dryRun bool) (func(), error) {
	var oldSvc *corev1.Service
	if old != nil {
		oldSvc = old.(*corev1.Service)
	}
	return s.allocateClusterIP(ctx, obj.(*corev1.Service), oldSvc, dryRun)
}

// Release gives back the cluster IPs of a deleted Service.
func (s Strategy) Release(ctx context.Context, obj any) {
	s.releaseClusterIPs(ctx, obj.(*corev1.Service))
}

// validate checks the Service fields dnsplane relies on.
func validate(svc *corev1.Service) field.ErrorList {
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
func (s Strategy) allocateClusterIP(ctx context.Context, svc, old *corev1.Service, dryRun bool) (func(), error) {
	noop := func() {}
	spec := &svc.Spec
	ipsPath := field.NewPath("spec", "clusterIPs")
	if old != nil {
		if spec.ClusterIP == "" {
			spec.ClusterIP, spec.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
		}
		if spec.ClusterIP != old.Spec.ClusterIP && spec.Type != corev1.ServiceTypeExternalName && old.Spec.Type != corev1.ServiceTypeExternalName {
			return noop, invalid(svc, field.ErrorList{field.Invalid(ipsPath.Index(0), spec.ClusterIP, "may not change once set")})
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
	if s.IPs == nil {
		return noop, nil
	}
	owner := "services/" + svc.Namespace + "/" + svc.Name
	var ip net.IP
	if spec.ClusterIP == "" {
		if dryRun {
			// A dry run must not hold an address; the answer shows none.
			return noop, nil
		}
		got, err := s.IPs.Allocate(ctx, owner)
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
			if err := s.IPs.AllocateSpecific(ctx, ip, owner); err != nil {
				switch {
				case errors.Is(err, ipalloc.ErrAllocated):
					// Upstream's text; the owner stays out of the answer, it
					// may be in a namespace the caller cannot see.
					return noop, invalid(svc, field.ErrorList{field.Invalid(ipsPath, []string{spec.ClusterIP}, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", spec.ClusterIP))})
				case errors.Is(err, ipalloc.ErrNotInRange):
					return noop, invalid(svc, field.ErrorList{field.Invalid(ipsPath, []string{spec.ClusterIP}, fmt.Sprintf("failed to allocate IP %s: %v", spec.ClusterIP, err))})
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
	return func() { _ = s.IPs.Release(context.WithoutCancel(ctx), ip) }, nil
}

// invalid is the 422 for svc with errs, as the API server answers it.
func invalid(svc *corev1.Service, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, errs)
}

func (s Strategy) releaseClusterIPs(ctx context.Context, svc *corev1.Service) {
	if s.IPs == nil {
		return
	}
	for _, a := range svc.Spec.ClusterIPs {
		if ip := net.ParseIP(a); ip != nil && s.IPs.Range().Contains(ip) {
			if err := s.IPs.Release(ctx, ip); err != nil {
				s.log().Error("releasing cluster IP", "service", svc.Namespace+"/"+svc.Name, "ip", a, "err", err)
			}
		}
	}
}
