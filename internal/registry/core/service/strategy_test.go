package service

import (
	"context"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// TestValidate: upstream's Service validation, after the defaults and the
// clusterIP → clusterIPs normalization PrepareForCreate applies.
func TestValidate(t *testing.T) {
	port := func(name string, p int32) corev1.ServicePort { return corev1.ServicePort{Name: name, Port: p} }
	tests := []struct {
		name string
		spec corev1.ServiceSpec
		want []string // field.Error texts
	}{
		{"cluster IP", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{port("", 80)}}, nil},
		{"headless without ports", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone}, nil},
		{"no ports", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
			[]string{"spec.ports: Required value"}},
		{"port 0", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{port("", 0)}},
			[]string{"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
				"spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive"}}, // defaulted from the port
		{"unnamed port among two", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{port("a", 80), port("", 81)}},
			[]string{"spec.ports[1].name: Required value"}},
		{"bad cluster IP", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.999", Ports: []corev1.ServicePort{port("", 80)}},
			[]string{`spec.clusterIPs[0]: Invalid value: "10.0.0.999": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`}},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}, nil},
		{"external name missing", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName},
			[]string{"spec.externalName: Required value"}},
		{"external name with cluster IP", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "x", ClusterIP: "10.0.0.1"},
			[]string{"spec.clusterIPs: Forbidden: may not be set for ExternalName services"}},
		{"unknown type", corev1.ServiceSpec{Type: "Magic", Ports: []corev1.ServicePort{port("", 80)}},
			[]string{`spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: tt.spec}
			s := New(nil, nil, nil)
			s.PrepareForCreate(context.Background(), svc)
			var got []string
			for _, e := range rest.ValidateCreate(context.Background(), s, true, svc) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// fakeIPs is an in-memory Allocator, so the strategy's own rules are tested
// without etcd; ipalloc's tests and the API server's Service tests run the
// etcd-backed allocator.
type fakeIPs struct {
	next  int
	taken map[string]string
}

func (f *fakeIPs) Allocate(_ context.Context, owner string) (net.IP, error) {
	f.next++
	ip := net.IPv4(10, 96, 0, byte(f.next))
	f.taken[ip.String()] = owner
	return ip, nil
}

func (f *fakeIPs) AllocateSpecific(_ context.Context, ip net.IP, owner string) error {
	if _, ok := f.taken[ip.String()]; ok {
		return errAllocated{}
	}
	f.taken[ip.String()] = owner
	return nil
}

func (f *fakeIPs) Release(_ context.Context, ip net.IP) error {
	delete(f.taken, ip.String())
	return nil
}

func (f *fakeIPs) Range() *net.IPNet {
	_, n, _ := net.ParseCIDR("10.96.0.0/24")
	return n
}

type errAllocated struct{}

func (errAllocated) Error() string { return "provided IP is already allocated" }

// TestReserve: a cluster IP is allocated on create, kept and immutable on
// update, given back by undo and on release; headless and ExternalName
// Services hold none; a dry run holds none.
func TestReserve(t *testing.T) {
	ctx := context.Background()
	ips := &fakeIPs{taken: map[string]string{}}
	s := New(ips, nil, nil)
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}
	svc.Name, svc.Namespace = "web", "default"
	undo, err := s.Reserve(ctx, svc, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "10.96.0.1" || len(svc.Spec.ClusterIPs) != 1 || ips.taken["10.96.0.1"] != "services/default/web" {
		t.Fatalf("after create: spec %+v, taken %v", svc.Spec, ips.taken)
	}
	if len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != corev1.IPv4Protocol || svc.Spec.IPFamilyPolicy == nil {
		t.Errorf("IP family fields not set: %+v", svc.Spec)
	}
	undo()
	if len(ips.taken) != 0 {
		t.Errorf("undo left %v", ips.taken)
	}

	if _, err := s.Reserve(ctx, svc, nil, false); err != nil {
		t.Fatal(err)
	}
	upd := &corev1.Service{ObjectMeta: svc.ObjectMeta, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}
	if _, err := s.Reserve(ctx, upd, svc, false); err != nil || upd.Spec.ClusterIP != svc.Spec.ClusterIP {
		t.Errorf("update without a cluster IP: %v, got %q want the stored %q", err, upd.Spec.ClusterIP, svc.Spec.ClusterIP)
	}
	moved := &corev1.Service{ObjectMeta: svc.ObjectMeta, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.200"}}
	_, err = s.Reserve(ctx, moved, svc, false)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "may not change once set") {
		t.Errorf("changing the cluster IP: %v, want 422 may not change once set", err)
	}
	taken := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: svc.Spec.ClusterIP}}
	taken.Name = "other"
	if _, err := s.Reserve(ctx, taken, nil, false); err == nil {
		t.Errorf("a second Service got %s", svc.Spec.ClusterIP)
	}
	s.Release(ctx, svc)
	if len(ips.taken) != 0 {
		t.Errorf("release left %v", ips.taken)
	}

	for _, spec := range []corev1.ServiceSpec{
		{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone},
		{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
	} {
		o := &corev1.Service{Spec: spec}
		if _, err := s.Reserve(ctx, o, nil, false); err != nil || len(ips.taken) != 0 {
			t.Errorf("%+v: %v, taken %v", spec, err, ips.taken)
		}
	}
	dry := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}
	if _, err := s.Reserve(ctx, dry, nil, true); err != nil || len(ips.taken) != 0 || dry.Spec.ClusterIP != "" {
		t.Errorf("dry run: %v, taken %v, clusterIP %q", err, ips.taken, dry.Spec.ClusterIP)
	}
}
