package service

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/portalloc"
)

// fakePorts is an in-memory NodePortAllocator over 30000-30009, answering
// with portalloc's errors; portalloc's tests run the etcd-backed one.
type fakePorts struct{ taken map[int]string }

func (f *fakePorts) Allocate(_ context.Context, owner string) (int, error) {
	for p := 30000; p < 30010; p++ {
		if _, ok := f.taken[p]; !ok {
			f.taken[p] = owner
			return p, nil
		}
	}
	return 0, portalloc.ErrFull
}

func (f *fakePorts) AllocateSpecific(_ context.Context, port int, owner string) error {
	if port < 30000 || port >= 30010 {
		return portalloc.ErrNotInRange
	}
	if _, ok := f.taken[port]; ok {
		return portalloc.ErrAllocated
	}
	f.taken[port] = owner
	return nil
}

func (f *fakePorts) Release(_ context.Context, port int) error {
	delete(f.taken, port)
	return nil
}

func (f *fakePorts) ports() []int { return slices.Sorted(maps.Keys(f.taken)) }

func nodePortService(name string, typ corev1.ServiceType, nodePorts ...int32) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.ServiceSpec{Type: typ}}
	for i, np := range nodePorts {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: string(rune('a' + i)), Port: int32(80 + i), Protocol: corev1.ProtocolTCP, NodePort: np})
	}
	return svc
}

// TestNodePorts: kube-apiserver's node port rules, step by step on one
// allocator: allocated on create, named ones claimed, kept on an update
// that leaves them out, given back by a type change, an undo and a
// delete.
func TestNodePorts(t *testing.T) {
	ctx := context.Background()
	ports := &fakePorts{taken: map[int]string{}}
	s := New(nil, ports, nil)

	web := nodePortService("web", corev1.ServiceTypeNodePort, 0, 30005)
	undo, err := s.Reserve(ctx, web, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int32{web.Spec.Ports[0].NodePort, web.Spec.Ports[1].NodePort}; got[0] == 0 || got[0] == 30005 || got[1] != 30005 {
		t.Fatalf("node ports after create: %v", got)
	}
	undo()
	if len(ports.taken) != 0 {
		t.Fatalf("undo left %v", ports.taken)
	}
	web = nodePortService("web", corev1.ServiceTypeNodePort, 0, 30005)
	if _, err := s.Reserve(ctx, web, nil, false); err != nil {
		t.Fatal(err)
	}
	held := ports.ports()

	// A second Service naming a taken port: kube's 422.
	other := nodePortService("other", corev1.ServiceTypeNodePort, 30005)
	_, err = s.Reserve(ctx, other, nil, false)
	if want := "spec.ports[0].nodePort: Invalid value: 30005: provided port is already allocated"; !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("a taken node port: %v, want %q", err, want)
	}
	outside := nodePortService("outside", corev1.ServiceTypeNodePort, 80)
	if _, err := s.Reserve(ctx, outside, nil, false); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is not in the valid range") {
		t.Errorf("a node port out of range: %v", err)
	}
	if !slices.Equal(ports.ports(), held) {
		t.Errorf("refused Services hold ports: %v, want %v", ports.ports(), held)
	}

	// kubectl apply of the manifest without nodePort keeps the allocated
	// ones (PrepareForUpdate, before validation).
	applied := nodePortService("web", corev1.ServiceTypeNodePort, 0, 0)
	s.PrepareForUpdate(ctx, applied, web)
	if applied.Spec.Ports[0].NodePort != web.Spec.Ports[0].NodePort || applied.Spec.Ports[1].NodePort != 30005 {
		t.Errorf("update without node ports: %+v, want the stored %+v", applied.Spec.Ports, web.Spec.Ports)
	}
	if _, err := s.Reserve(ctx, applied, web, false); err != nil || !slices.Equal(ports.ports(), held) {
		t.Errorf("an unchanged update: %v, ports %v, want %v", err, ports.ports(), held)
	}

	// A type change to ClusterIP drops the ports the client sent back
	// unchanged, and the written update gives them back.
	clusterIP := web.DeepCopy()
	clusterIP.Spec.Type = corev1.ServiceTypeClusterIP
	s.PrepareForUpdate(ctx, clusterIP, web)
	for _, p := range clusterIP.Spec.Ports {
		if p.NodePort != 0 {
			t.Errorf("type ClusterIP kept node port %d", p.NodePort)
		}
	}
	if _, err := s.Reserve(ctx, clusterIP, web, false); err != nil {
		t.Fatal(err)
	}
	s.ReleaseUpdated(ctx, clusterIP, web)
	if len(ports.taken) != 0 {
		t.Errorf("after type ClusterIP: %v still held", ports.taken)
	}

	// TCP and UDP of one port share a node port; a delete gives it back,
	// with the health check port of a Local LoadBalancer.
	dns := nodePortService("dns", corev1.ServiceTypeLoadBalancer, 0, 0)
	dns.Spec.Ports[1].Port, dns.Spec.Ports[1].Protocol = 80, corev1.ProtocolUDP
	dns.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	if _, err := s.Reserve(ctx, dns, nil, false); err != nil {
		t.Fatal(err)
	}
	if dns.Spec.Ports[0].NodePort == 0 || dns.Spec.Ports[0].NodePort != dns.Spec.Ports[1].NodePort || dns.Spec.HealthCheckNodePort == 0 {
		t.Errorf("LoadBalancer: ports %+v, health check %d", dns.Spec.Ports, dns.Spec.HealthCheckNodePort)
	}
	if len(ports.taken) != 2 {
		t.Errorf("LoadBalancer holds %v, want its shared node port and its health check port", ports.taken)
	}
	s.Release(ctx, dns)
	if len(ports.taken) != 0 {
		t.Errorf("after delete: %v still held", ports.taken)
	}

	// A dry run holds nothing; ClusterIP Services hold nothing.
	dry := nodePortService("dry", corev1.ServiceTypeNodePort, 0)
	if _, err := s.Reserve(ctx, dry, nil, true); err != nil || len(ports.taken) != 0 {
		t.Errorf("dry run: %v, held %v", err, ports.taken)
	}
	plain := nodePortService("plain", corev1.ServiceTypeClusterIP, 0)
	if _, err := s.Reserve(ctx, plain, nil, false); err != nil || len(ports.taken) != 0 || plain.Spec.Ports[0].NodePort != 0 {
		t.Errorf("ClusterIP Service: %v, held %v", err, ports.taken)
	}
}

// TestTypeChangeToExternalName: the cluster IP goes with the type, as
// upstream's dropTypeDependentFields clears it and kube gives it back.
func TestTypeChangeToExternalName(t *testing.T) {
	ctx := context.Background()
	ips := &fakeIPs{taken: map[string]string{}}
	s := New(ips, &fakePorts{taken: map[int]string{}}, nil)
	svc := nodePortService("db", corev1.ServiceTypeClusterIP, 0)
	if _, err := s.Reserve(ctx, svc, nil, false); err != nil {
		t.Fatal(err)
	}
	ext := svc.DeepCopy()
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
	s.PrepareForUpdate(ctx, ext, svc)
	if _, err := s.Reserve(ctx, ext, svc, false); err != nil {
		t.Fatal(err)
	}
	if ext.Spec.ClusterIP != "" || len(ext.Spec.ClusterIPs) != 0 || ext.Spec.IPFamilyPolicy != nil {
		t.Errorf("ExternalName kept %q %v %v", ext.Spec.ClusterIP, ext.Spec.ClusterIPs, ext.Spec.IPFamilyPolicy)
	}
	s.ReleaseUpdated(ctx, ext, svc)
	if len(ips.taken) != 0 {
		t.Errorf("the cluster IP is still held: %v", ips.taken)
	}
}
