package kubernetesservice

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	upstreamservice "k8s.io/kubernetes/pkg/controlplane/controller/kubernetesservice"
	"k8s.io/kubernetes/pkg/controlplane/reconcilers"
	"k8s.io/utils/ptr"
)

// leaseSet is a Leases and upstream's reconcilers.Leases over one set of
// addresses, listed sorted so both reconcilers see one order.
type leaseSet map[string]bool

func (l leaseSet) List(context.Context) ([]string, error) { return l.ListLeases() }
func (l leaseSet) Update(_ context.Context, ip string) error {
	return l.UpdateLease(ip)
}
func (l leaseSet) Remove(_ context.Context, ip string) error {
	if !l[ip] {
		return ErrNoLease
	}
	delete(l, ip)
	return nil
}
func (l leaseSet) ListLeases() ([]string, error) { return slices.Sorted(maps.Keys(l)), nil }
func (l leaseSet) UpdateLease(ip string) error   { l[ip] = true; return nil }
func (l leaseSet) RemoveLease(ip string) error {
	if !l[ip] {
		return errors.New("not found")
	}
	delete(l, ip)
	return nil
}
func (l leaseSet) Destroy() {}

type step struct {
	op             string // reconcile, remove (at start), stop (remove on the way out)
	ip             string
	reconcilePorts bool
}

var https = []corev1.EndpointPort{{Name: "https", Port: 6443, Protocol: corev1.ProtocolTCP}}

func eps(labels map[string]string, subsets ...corev1.EndpointSubset) *corev1.Endpoints { //nolint:staticcheck // SA1019: the kubernetes Service's v1 Endpoints
	return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: labels}, Subsets: subsets} //nolint:staticcheck // SA1019: as above
}

func subset(ports []corev1.EndpointPort, ips ...string) corev1.EndpointSubset { //nolint:staticcheck // SA1019: as above
	s := corev1.EndpointSubset{Ports: ports} //nolint:staticcheck // SA1019: as above
	for _, ip := range ips {
		s.Addresses = append(s.Addresses, corev1.EndpointAddress{IP: ip}) //nolint:staticcheck // SA1019: as above
	}
	return s
}

var skipMirror = map[string]string{discoveryv1.LabelSkipMirror: "true"}

// TestAgainstUpstream runs kube-apiserver's lease endpoint reconciler and
// this package's over the same objects, leases and steps, and wants the
// same API calls, errors and resulting Endpoints and EndpointSlice: the
// package is upstream's behaviour without upstream's links (doc.go).
func TestAgainstUpstream(t *testing.T) {
	t.Parallel()
	v6slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv6,
	}
	staleSlice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.99"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	tests := []struct {
		name    string
		objects []runtime.Object
		leases  []string
		steps   []step
	}{
		{name: "first start", steps: []step{{"remove", "192.0.2.1", true}, {"reconcile", "192.0.2.1", false}}},
		{name: "second server joins", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1"))},
			steps:   []step{{"reconcile", "192.0.2.2", false}}},
		{name: "in step: only the slice is written", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1"))},
			steps:   []step{{"reconcile", "192.0.2.1", false}, {"reconcile", "192.0.2.1", false}}},
		{name: "skip-mirror label missing", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(map[string]string{"a": "b"}, subset(https, "192.0.2.1"))},
			steps:   []step{{"reconcile", "192.0.2.1", false}}},
		{name: "two subsets are remade",
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1"), subset(https, "192.0.2.3"))},
			steps:   []step{{"reconcile", "192.0.2.1", false}}},
		{name: "no subset is remade",
			objects: []runtime.Object{eps(skipMirror)},
			steps:   []step{{"reconcile", "192.0.2.1", false}}},
		{name: "ports kept by the loop", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(skipMirror, subset([]corev1.EndpointPort{{Name: "x", Port: 1, Protocol: corev1.ProtocolUDP}}, "192.0.2.1"))},
			steps:   []step{{"reconcile", "192.0.2.1", false}}},
		{name: "ports reset on reconcilePorts", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(skipMirror, subset([]corev1.EndpointPort{{Name: "x", Port: 1, Protocol: corev1.ProtocolUDP}}, "192.0.2.1"))},
			steps:   []step{{"reconcile", "192.0.2.1", true}}},
		{name: "duplicate address", leases: []string{"192.0.2.1", "192.0.2.2"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1", "192.0.2.1"))},
			steps:   []step{{"reconcile", "192.0.2.1", false}}},
		{name: "stale address", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1", "192.0.2.9")), staleSlice},
			steps:   []step{{"reconcile", "192.0.2.1", false}}},
		{name: "crashed last run: stale lease removed at start", leases: []string{"192.0.2.1", "192.0.2.2"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1", "192.0.2.2"))},
			steps:   []step{{"remove", "192.0.2.1", true}, {"reconcile", "192.0.2.1", false}}},
		{name: "crashed last run, alone: no leases left", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1"))},
			steps:   []step{{"remove", "192.0.2.1", true}}},
		{name: "clean stop of one of two", leases: []string{"192.0.2.2"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1", "192.0.2.2"))},
			steps:   []step{{"reconcile", "192.0.2.1", false}, {"stop", "192.0.2.1", true}, {"reconcile", "192.0.2.1", false}}},
		{name: "clean stop of the last", leases: []string{},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1"))},
			steps:   []step{{"reconcile", "192.0.2.1", false}, {"stop", "192.0.2.1", true}}},
		{name: "stop with no endpoints", steps: []step{{"reconcile", "192.0.2.1", false}, {"stop", "192.0.2.1", true}}},
		{name: "stop, endpoints gone", leases: []string{"192.0.2.1"}, steps: []step{{"stop", "192.0.2.1", true}}},
		{name: "stop without a lease", steps: []step{{"stop", "192.0.2.1", true}}},
		{name: "IPv6", steps: []step{{"reconcile", "2001:db8::1", false}}},
		{name: "slice of the other family replaced", leases: []string{"192.0.2.1"},
			objects: []runtime.Object{eps(skipMirror, subset(https, "192.0.2.1")), v6slice},
			steps:   []step{{"reconcile", "192.0.2.1", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := runUpstream(t, tt.objects, tt.leases, tt.steps)
			got := runOurs(t, tt.objects, tt.leases, tt.steps)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("upstream (-) and this package (+) differ:\n%s", diff)
			}
		})
	}
}

// outcome is what a run leaves and how it got there.
type outcome struct {
	Errors    []bool // per step: did it fail
	Calls     []string
	Endpoints *corev1.Endpoints //nolint:staticcheck // SA1019: as above
	Slice     *discoveryv1.EndpointSlice
}

func newFake(objects []runtime.Object) *fake.Clientset {
	c := fake.NewClientset()
	for _, o := range objects {
		if err := c.Tracker().Add(o.DeepCopyObject()); err != nil {
			panic(err)
		}
	}
	return c
}

func leasesOf(ips []string) leaseSet {
	l := leaseSet{}
	for _, ip := range ips {
		l[ip] = true
	}
	return l
}

func runUpstream(t *testing.T, objects []runtime.Object, leases []string, steps []step) outcome {
	t.Helper()
	c := newFake(objects)
	r := reconcilers.NewLeaseEndpointReconciler(reconcilers.NewEndpointsAdapter(c.CoreV1(), c.DiscoveryV1()), leasesOf(leases))
	var out outcome
	for _, s := range steps {
		var err error
		switch s.op {
		case "reconcile":
			err = r.ReconcileEndpoints(name, net.ParseIP(s.ip), https, s.reconcilePorts)
		case "remove":
			err = r.RemoveEndpoints(name, net.ParseIP(s.ip), https)
		case "stop":
			r.StopReconciling()
			err = r.RemoveEndpoints(name, net.ParseIP(s.ip), https)
		}
		out.Errors = append(out.Errors, err != nil)
	}
	return finish(t, c, out)
}

func runOurs(t *testing.T, objects []runtime.Object, leases []string, steps []step) outcome {
	t.Helper()
	c := newFake(objects)
	e := &endpoints{client: c, leases: leasesOf(leases), name: name, ports: https}
	var out outcome
	for _, s := range steps {
		var err error
		switch s.op {
		case "reconcile":
			err = e.reconcile(t.Context(), s.ip, s.reconcilePorts)
		case "remove":
			err = e.remove(t.Context(), s.ip, false)
		case "stop":
			err = e.remove(t.Context(), s.ip, true)
		}
		out.Errors = append(out.Errors, err != nil)
	}
	return finish(t, c, out)
}

func finish(t *testing.T, c *fake.Clientset, out outcome) outcome {
	t.Helper()
	for _, a := range c.Actions() {
		out.Calls = append(out.Calls, fmt.Sprintf("%s %s", a.GetVerb(), a.GetResource().Resource))
	}
	ctx := context.Background()
	ep, err := c.CoreV1().Endpoints(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		ep.ManagedFields = nil // timestamps
		out.Endpoints = ep
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	s, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		s.ManagedFields = nil
		out.Slice = s
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return out
}

// TestServiceAgainstUpstream: a missing kubernetes Service is created as
// kube-apiserver's controller creates it, and one that exists is left
// alone.
func TestServiceAgainstUpstream(t *testing.T) {
	t.Parallel()
	cfg := Config{
		PublicIP: net.ParseIP("192.0.2.1"), PublicServicePort: 6443,
		ServiceIP: net.ParseIP("10.96.0.1"), ServicePort: 443,
	}
	existing := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}}
	for _, objects := range [][]runtime.Object{nil, {existing}} {
		// Upstream's, with its service lister synced.
		up := newFake(objects)
		factory := informers.NewSharedInformerFactory(up, 0)
		c := upstreamservice.New(upstreamservice.Config{
			PublicIP: cfg.PublicIP, EndpointReconciler: reconcilers.NewNoneEndpointReconciler(),
			ServiceIP: cfg.ServiceIP, ServicePort: cfg.ServicePort, PublicServicePort: cfg.PublicServicePort,
		}, up, factory.Core().V1().Services())
		stop := make(chan struct{})
		factory.Start(stop)
		factory.WaitForCacheSync(stop)
		err := c.UpdateKubernetesService(false)
		close(stop)
		factory.Shutdown()
		if err != nil {
			t.Fatal(err)
		}

		ours := newFake(objects)
		cfg.Client = ours
		if err := (&Controller{cfg: cfg}).ensureService(t.Context()); err != nil {
			t.Fatal(err)
		}
		want, err := up.CoreV1().Services(metav1.NamespaceDefault).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ours.CoreV1().Services(metav1.NamespaceDefault).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want.ManagedFields, got.ManagedFields = nil, nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("with %d objects: upstream (-) and this package (+) differ:\n%s", len(objects), diff)
		}
	}
}
