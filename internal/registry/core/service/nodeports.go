package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/internal/portalloc"
)

// NodePortAllocator hands out node ports; *portalloc.Allocator implements
// it.
type NodePortAllocator interface {
	Allocate(ctx context.Context, owner string) (int, error)
	AllocateSpecific(ctx context.Context, port int, owner string) error
	Release(ctx context.Context, port int) error
}

// needsNodePorts is kube-apiserver's needsNodePort: a NodePort Service, or
// a LoadBalancer that did not turn allocateLoadBalancerNodePorts off.
func needsNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// mayHoldNodePorts says the Service's type lets it name node ports: a
// LoadBalancer without allocation still keeps the ones it names.
func mayHoldNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

// needsHealthCheckNodePort is kube-apiserver's needsHCNodePort.
func needsHealthCheckNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// heldNodePorts are the node ports svc holds: its ports' and its health
// check's.
func heldNodePorts(svc *corev1.Service) []int {
	if svc == nil {
		return nil
	}
	var out []int
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 && !slices.Contains(out, int(p.NodePort)) {
			out = append(out, int(p.NodePort))
		}
	}
	if hc := int(svc.Spec.HealthCheckNodePort); hc != 0 && !slices.Contains(out, hc) {
		out = append(out, hc)
	}
	return out
}

// patchNodePorts fills in, on update, the node ports a client left out,
// as kube-apiserver's patchAllocatedValues does before the strategy and
// validation run (pkg/registry/core/service/storage, unexported): `kubectl
// apply` of a manifest without nodePort keeps the allocated one.
func patchNodePorts(svc, old *corev1.Service) {
	if needsNodePorts(old) && needsNodePorts(svc) {
		used := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			for _, o := range old.Spec.Ports {
				if p.NodePort != 0 && p.NodePort == o.NodePort {
					used[p.NodePort] = true
				}
			}
		}
		byName := map[string]int32{}
		for _, o := range old.Spec.Ports {
			byName[o.Name] = o.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if old, ok := byName[p.Name]; ok && p.NodePort == 0 && !used[old] {
				p.NodePort = old
			}
		}
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

// dropTypeDependentFields clears, on update, what a type change left
// behind and the client sent back unchanged, as upstream's Service strategy
// does in PrepareForUpdate (dropTypeDependentFields in
// pkg/registry/core/service/strategy.go): `kubectl patch -p
// '{"spec":{"type":"ClusterIP"}}'` of a NodePort Service is then valid, and
// what was allocated is given back once the update is written
// (ReleaseUpdated). Upstream's strategy cannot be called: its package links
// kube's storage backend into every dnsplane process (cmd/dnsplane's
// TestInitBudget).
func dropTypeDependentFields(svc, old *corev1.Service) {
	spec, was := &svc.Spec, &old.Spec
	if holdsClusterIP(old) && !holdsClusterIP(svc) {
		if spec.ClusterIP == was.ClusterIP && slices.Equal(spec.ClusterIPs, was.ClusterIPs) {
			spec.ClusterIP, spec.ClusterIPs = "", nil
		}
		if slices.Equal(spec.IPFamilies, was.IPFamilies) {
			spec.IPFamilies = nil
		}
		if ptrEqual(spec.IPFamilyPolicy, was.IPFamilyPolicy) {
			spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePorts(old) && !needsNodePorts(svc) && sameNodePorts(svc, old) {
		for i := range spec.Ports {
			spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(svc) && spec.HealthCheckNodePort == was.HealthCheckNodePort {
		spec.HealthCheckNodePort = 0
	}
	if was.Type == corev1.ServiceTypeLoadBalancer && spec.Type != corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts != nil && ptrEqual(spec.AllocateLoadBalancerNodePorts, was.AllocateLoadBalancerNodePorts) {
			spec.AllocateLoadBalancerNodePorts = nil
		}
		if ptrEqual(spec.LoadBalancerClass, was.LoadBalancerClass) {
			spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(svc) && spec.ExternalTrafficPolicy == was.ExternalTrafficPolicy {
		spec.ExternalTrafficPolicy = ""
	}
	// Upstream also clears status.loadBalancer of a Service that is no
	// longer a LoadBalancer; here an update keeps the stored status, as
	// for every kind with a status subresource (TestStatusSubresourceSplit),
	// where a cloud's service controller would clear it.
}

// holdsClusterIP: every type but ExternalName has a cluster IP (None
// counts), as upstream's needsClusterIP.
func holdsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

// externallyAccessible is upstream's ExternallyAccessible: a NodePort or
// LoadBalancer, or a ClusterIP with external IPs.
func externallyAccessible(svc *corev1.Service) bool {
	return mayHoldNodePorts(svc) || (svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

// sameNodePorts says the client sent the old node ports unchanged.
func sameNodePorts(svc, old *corev1.Service) bool {
	if len(svc.Spec.Ports) != len(old.Spec.Ports) {
		return false
	}
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].NodePort != old.Spec.Ports[i].NodePort {
			return false
		}
	}
	return true
}

func ptrEqual[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// allocateNodePorts gives the Service the node ports its type needs, as
// kube-apiserver's allocNodePorts and allocHealthCheckNodePort do: the
// ones it names are claimed (a port shared by a TCP and a UDP port once),
// the ones it leaves at 0 are allocated from --service-node-port-range,
// and a port the old object already held is kept. It returns how to give
// back what it took.
func (s Strategy) allocateNodePorts(ctx context.Context, svc, old *corev1.Service, dryRun bool) (func(), error) {
	noop := func() {}
	if s.NodePorts == nil || !mayHoldNodePorts(svc) {
		return noop, nil
	}
	owner := "services/" + svc.Namespace + "/" + svc.Name
	held := heldNodePorts(old)
	var taken []int
	undo := func() {
		for _, p := range taken {
			_ = s.NodePorts.Release(context.WithoutCancel(ctx), p)
		}
	}
	claim := func(port int, fld *field.Path) error {
		if slices.Contains(held, port) || slices.Contains(taken, port) || dryRun {
			return nil
		}
		err := s.NodePorts.AllocateSpecific(ctx, port, owner)
		if errors.Is(err, portalloc.ErrAllocated) || errors.Is(err, portalloc.ErrNotInRange) {
			return invalid(svc, field.ErrorList{field.Invalid(fld, port, err.Error())})
		}
		if err != nil {
			return fmt.Errorf("allocating node port %d for %s: %w", port, owner, err)
		}
		taken = append(taken, port)
		return nil
	}
	allocate := func() (int32, error) {
		port, err := s.NodePorts.Allocate(ctx, owner)
		if errors.Is(err, portalloc.ErrFull) {
			// Upstream's answer: a server-side failure.
			return 0, apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
		}
		if err != nil {
			return 0, fmt.Errorf("allocating a node port for %s: %w", owner, err)
		}
		taken = append(taken, port)
		return int32(port), nil //nolint:gosec // a port
	}
	ports := field.NewPath("spec", "ports")
	// Named ports first, so that an allocated one never takes a port a
	// later entry names.
	for i, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			if err := claim(int(p.NodePort), ports.Index(i).Child("nodePort")); err != nil {
				undo()
				return noop, err
			}
		}
	}
	if needsNodePorts(svc) && !dryRun {
		for i := range svc.Spec.Ports {
			if p := &svc.Spec.Ports[i]; p.NodePort == 0 {
				// A TCP and a UDP port of one number share a node port.
				if port := sharedNodePort(svc.Spec.Ports, i); port != 0 {
					p.NodePort = port
					continue
				}
				port, err := allocate()
				if err != nil {
					undo()
					return noop, err
				}
				p.NodePort = port
			}
		}
	}
	if needsHealthCheckNodePort(svc) {
		if hc := svc.Spec.HealthCheckNodePort; hc != 0 {
			if err := claim(int(hc), field.NewPath("spec", "healthCheckNodePort")); err != nil {
				undo()
				return noop, err
			}
		} else if !dryRun {
			port, err := allocate()
			if err != nil {
				undo()
				return noop, err
			}
			svc.Spec.HealthCheckNodePort = port
		}
	}
	return undo, nil
}

// releaseNodePorts gives back the node ports in ports.
func (s Strategy) releaseNodePorts(ctx context.Context, svc *corev1.Service, ports []int) {
	for _, p := range ports {
		if err := s.NodePorts.Release(ctx, p); err != nil {
			s.log().Error("releasing node port", "service", svc.Namespace+"/"+svc.Name, "port", p, "err", err)
		}
	}
}

// sharedNodePort is the node port of another entry with port i's number
// and another protocol, or 0.
func sharedNodePort(ports []corev1.ServicePort, i int) int32 {
	for j, o := range ports {
		if j != i && o.Port == ports[i].Port && o.Protocol != ports[i].Protocol && o.NodePort != 0 {
			return o.NodePort
		}
	}
	return 0
}
