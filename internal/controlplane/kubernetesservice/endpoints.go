package kubernetesservice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	endpointsv1 "k8s.io/kubernetes/pkg/api/v1/endpoints"
	utilnet "k8s.io/utils/net"
)

// errNoLeases is kube-apiserver's refusal to empty the endpoints while
// this API server still runs: it has just renewed its own lease, so an
// empty list means storage is wrong, not that no API server is up.
var errNoLeases = errors.New("no API server IP addresses were listed in storage, refusing to erase all endpoints for the kubernetes Service")

// endpoints is kube-apiserver's lease endpoint reconciler
// (k8s.io/kubernetes/pkg/controlplane/reconcilers, lease.go and
// endpointsadapter.go), in behaviour: the Service's Endpoints hold one
// subset with the addresses of the leases, and a one-to-one
// EndpointSlice follows them. Why it is not that package: see doc.go.
type endpoints struct {
	client kubernetes.Interface
	leases Leases
	name   string // of the Service, in default
	ports  []corev1.EndpointPort

	// mu orders reconciles and the final removal; stopping makes every
	// reconcile after it a no-op, so a late tick cannot put this address
	// back after its removal.
	mu       sync.Mutex
	stopping atomic.Bool
}

// reconcile renews ip's lease, then writes the Endpoints and
// EndpointSlice for the leases that hold. reconcilePorts also resets ports
// that differ; the periodic loop leaves them, as kube-apiserver's does.
func (e *endpoints) reconcile(ctx context.Context, ip string, reconcilePorts bool) error {
	if e.stopping.Load() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Renewed whatever happens below, so the other API servers keep
	// this address even when this write conflicts.
	if err := e.leases.Update(ctx, ip); err != nil {
		return err
	}
	return e.write(ctx, reconcilePorts)
}

// remove stops later reconciles when stop is set, gives up ip's lease
// and writes the endpoints without it. ErrNoLease (wrapped) when ip held
// none.
func (e *endpoints) remove(ctx context.Context, ip string, stop bool) error {
	if stop {
		e.stopping.Store(true)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.leases.Remove(ctx, ip); err != nil {
		return err
	}
	return e.write(ctx, true)
}

// write brings the Endpoints to the leases' addresses, then the
// EndpointSlice to the Endpoints. Callers hold mu.
func (e *endpoints) write(ctx context.Context, reconcilePorts bool) error {
	client := e.client.CoreV1().Endpoints(metav1.NamespaceDefault)
	ep, err := client.Get(ctx, e.name, metav1.GetOptions{})
	create := apierrors.IsNotFound(err)
	switch {
	case create && e.stopping.Load():
		return nil // nothing to take this address out of
	case create:
		ep = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: metav1.NamespaceDefault}} //nolint:staticcheck // SA1019: kube-apiserver keeps the kubernetes Service's v1 Endpoints
	case err != nil:
		return fmt.Errorf("reading the %s endpoints: %w", e.name, err)
	}
	ips, err := e.leases.List(ctx)
	if err != nil {
		return err
	}
	// The last API server to stop still takes its own address out.
	if len(ips) == 0 && !e.stopping.Load() {
		return errNoLeases
	}

	// The EndpointSlice mirroring controller would write a second slice
	// for these Endpoints: this one writes its own.
	labelled := ep.Labels[discoveryv1.LabelSkipMirror] != "true"
	if labelled {
		if ep.Labels == nil {
			ep.Labels = map[string]string{}
		}
		ep.Labels[discoveryv1.LabelSkipMirror] = "true"
	}
	oneSubset := len(ep.Subsets) == 1
	addrsOK := oneSubset && sameAddresses(ep.Subsets[0].Addresses, ips) //nolint:staticcheck // SA1019: as above
	portsOK := oneSubset && (!reconcilePorts || slices.Equal(ep.Subsets[0].Ports, e.ports))
	if !labelled && oneSubset && addrsOK && portsOK {
		return e.writeSlice(ctx, ep)
	}
	if !oneSubset {
		ep.Subsets = []corev1.EndpointSubset{{Ports: e.ports}} //nolint:staticcheck // SA1019: as above
	}
	if !addrsOK {
		addrs := make([]corev1.EndpointAddress, len(ips)) //nolint:staticcheck // SA1019: as above
		for i, ip := range ips {
			addrs[i].IP = ip
		}
		ep.Subsets[0].Addresses = addrs
		// Upstream's canonical form: sorted, duplicates merged, and no
		// subset at all when no address is left.
		ep.Subsets = endpointsv1.RepackSubsets(ep.Subsets)
	}
	if len(ep.Subsets) > 0 && !portsOK {
		ep.Subsets[0].Ports = e.ports
	}
	if create {
		ep, err = client.Create(ctx, ep, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // another API server wrote it first; the next tick checks it
		}
	} else {
		ep, err = client.Update(ctx, ep, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing the %s endpoints: %w", e.name, err)
	}
	return e.writeSlice(ctx, ep)
}

// sameAddresses reports whether addrs name exactly ips, in any order,
// each once.
func sameAddresses(addrs []corev1.EndpointAddress, ips []string) bool { //nolint:staticcheck // SA1019: as above
	if len(addrs) != len(ips) {
		return false
	}
	seen := make(map[string]bool, len(ips))
	for _, ip := range ips {
		seen[ip] = false
	}
	for _, a := range addrs {
		if dup, known := seen[a.IP]; dup || !known {
			return false
		}
		seen[a.IP] = true
	}
	return true
}

// writeSlice creates or updates the EndpointSlice named as ep, one
// endpoint per address of ep's first subset.
func (e *endpoints) writeSlice(ctx context.Context, ep *corev1.Endpoints) error { //nolint:staticcheck // SA1019: as above
	want := sliceFor(ep)
	client := e.client.DiscoveryV1().EndpointSlices(ep.Namespace)
	have, err := client.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := client.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the %s endpoint slice: %w", want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading the %s endpoint slice: %w", want.Name, err)
	case have.AddressType != want.AddressType:
		// The address type is immutable: replace the slice.
		if err := client.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("replacing the %s endpoint slice: %w", want.Name, err)
		}
		if _, err := client.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("replacing the %s endpoint slice: %w", want.Name, err)
		}
		return nil
	case apiequality.Semantic.DeepEqual(have.Endpoints, want.Endpoints) &&
		apiequality.Semantic.DeepEqual(have.Ports, want.Ports) &&
		apiequality.Semantic.DeepEqual(have.Labels, want.Labels):
		return nil
	}
	// Like upstream, an update without resourceVersion: these objects
	// have one writer per address set, and the last one is right.
	if _, err := client.Update(ctx, want, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the %s endpoint slice: %w", want.Name, err)
	}
	return nil
}

// sliceFor is the EndpointSlice of ep: IPv6 when every address is, else
// IPv4 with the addresses of that family (single stack, as upstream's
// adapter).
func sliceFor(ep *corev1.Endpoints) *discoveryv1.EndpointSlice { //nolint:staticcheck // SA1019: as above
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ep.Name,
			Namespace: ep.Namespace,
			Labels:    map[string]string{discoveryv1.LabelServiceName: ep.Name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	if len(ep.Subsets) == 0 {
		return s
	}
	sub := ep.Subsets[0]
	for _, p := range sub.Ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: &p.Name, Protocol: &p.Protocol, Port: &p.Port})
	}
	all := append(slices.Clone(sub.Addresses), sub.NotReadyAddresses...)
	if len(all) > 0 && !slices.ContainsFunc(all, func(a corev1.EndpointAddress) bool { return !utilnet.IsIPv6String(a.IP) }) { //nolint:staticcheck // SA1019: as above
		s.AddressType = discoveryv1.AddressTypeIPv6
	}
	v6 := s.AddressType == discoveryv1.AddressTypeIPv6
	add := func(addrs []corev1.EndpointAddress, ready bool) { //nolint:staticcheck // SA1019: as above
		for _, a := range addrs {
			if utilnet.IsIPv6String(a.IP) != v6 {
				continue
			}
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
				Addresses:  []string{a.IP},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef:  a.TargetRef,
				NodeName:   a.NodeName,
			})
		}
	}
	add(sub.Addresses, true)
	add(sub.NotReadyAddresses, false)
	return s
}
