// Package service is the strategy of core/v1 Services: upstream's
// defaulting and validation (pkg/registry/core/service/strategy.go), and
// the cluster IP each Service holds in the service range (internal/ipalloc)
// and the node ports of NodePort and LoadBalancer Services
// (internal/portalloc), which are dnsplane's: reserved after validation, so
// that a refused request writes nothing (the allocation records live in
// etcd), and given back after a failed write, an update that drops them or
// a delete.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/dnsplane/dnsplane/internal/ipalloc"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
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
	upstream.Strategy[core.Service]
	// IPs allocates cluster IPs; nil allocates none (dnsplane validate,
	// and API servers started without a service range in tests).
	IPs Allocator
	// NodePorts allocates node ports; nil allocates none.
	NodePorts NodePortAllocator
	// Log reports cluster IPs that could not be given back; nil discards.
	Log *slog.Logger
}

var (
	_ rest.Strategy       = Strategy{}
	_ rest.StatusStrategy = Strategy{}
	_ rest.Reserver       = Strategy{}
	_ rest.UpdateReleaser = Strategy{}
)

// New returns the Service strategy allocating cluster IPs from ips and
// node ports from nodePorts.
func New(ips Allocator, nodePorts NodePortAllocator, log *slog.Logger) Strategy {
	return Strategy{
		Strategy: upstream.Strategy[core.Service]{
			Default: rest.Default{Status: true, Namespaced: true, ReturnDeletedObject: true},
			Rules: upstream.Rules[core.Service]{
				Validate:             corevalidation.ValidateServiceCreate,
				ValidateUpdate:       corevalidation.ValidateServiceUpdate,
				ValidateStatusUpdate: corevalidation.ValidateServiceStatusUpdate,
			},
		},
		IPs:       ips,
		NodePorts: nodePorts,
		Log:       log,
	}
}

func (s Strategy) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// PrepareForCreate clears the status, applies upstream's defaults and fills
// spec.clusterIPs from the clusterIP an older client set alone, as
// kube-apiserver's Service storage does before anything reads them
// (normalizeClusterIPs, pkg/registry/core/service/storage/storage.go):
// validation requires the two to agree.
func (s Strategy) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	if spec := &obj.(*corev1.Service).Spec; spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
}

// PrepareForUpdate keeps the stored status and applies upstream's defaults.
// An update that leaves out the cluster IP keeps the stored one (as
// kube-apiserver's patchAllocatedValues does), and one that sends the same
// clusterIP without clusterIPs keeps the stored clusterIPs
// (normalizeClusterIPs): both before validation, which holds the cluster
// IP immutable.
func (s Strategy) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	spec, oldSpec := &obj.(*corev1.Service).Spec, &old.(*corev1.Service).Spec
	if spec.ClusterIP == "" && spec.Type != corev1.ServiceTypeExternalName && oldSpec.Type != corev1.ServiceTypeExternalName {
		spec.ClusterIP = oldSpec.ClusterIP
	}
	if len(spec.ClusterIPs) == 0 && len(oldSpec.ClusterIPs) > 0 && spec.ClusterIP == oldSpec.ClusterIP {
		spec.ClusterIPs = oldSpec.ClusterIPs
	}
	patchNodePorts(obj.(*corev1.Service), old.(*corev1.Service))
	dropTypeDependentFields(obj.(*corev1.Service), old.(*corev1.Service))
}

// Reserve defaults the Service's IP families and gives it its cluster IP,
// in kube-apiserver's order (allocateCreate and allocateUpdate in
// pkg/registry/core/service/storage/alloc.go).
func (s Strategy) Reserve(ctx context.Context, obj, old any, dryRun bool) (func(), error) {
	svc := obj.(*corev1.Service)
	var oldSvc *corev1.Service
	if old != nil {
		oldSvc = old.(*corev1.Service)
	}
	if errs := initIPFamilies(svc, oldSvc, s.clusterFamily()); len(errs) > 0 {
		return func() {}, invalid(svc, errs)
	}
	undoIP, err := s.allocateClusterIP(ctx, svc, oldSvc, dryRun)
	if err != nil {
		return undoIP, err
	}
	undoPorts, err := s.allocateNodePorts(ctx, svc, oldSvc, dryRun)
	if err != nil {
		undoIP()
		return func() {}, err
	}
	return func() { undoPorts(); undoIP() }, nil
}

// Release gives back the cluster IPs and node ports of a deleted Service.
func (s Strategy) Release(ctx context.Context, obj any) {
	svc := obj.(*corev1.Service)
	s.releaseClusterIPs(ctx, svc)
	if s.NodePorts != nil {
		s.releaseNodePorts(ctx, svc, heldNodePorts(svc))
	}
}

// ReleaseUpdated gives back the cluster IP and node ports the old Service
// held and the written one no longer does (a type change, a port removed),
// as kube-apiserver's update transaction releases them once it commits.
func (s Strategy) ReleaseUpdated(ctx context.Context, obj, old any) {
	if svc, was := obj.(*corev1.Service), old.(*corev1.Service); len(svc.Spec.ClusterIPs) == 0 && len(was.Spec.ClusterIPs) > 0 {
		// A change to ExternalName gives back the cluster IP.
		s.releaseClusterIPs(ctx, was)
	}
	if s.NodePorts == nil {
		return
	}
	now := heldNodePorts(obj.(*corev1.Service))
	var gone []int
	for _, p := range heldNodePorts(old.(*corev1.Service)) {
		if !slices.Contains(now, p) {
			gone = append(gone, p)
		}
	}
	s.releaseNodePorts(ctx, obj.(*corev1.Service), gone)
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
		if spec.ClusterIP == "" && spec.Type != corev1.ServiceTypeExternalName {
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
