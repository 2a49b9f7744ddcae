package pod

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/validation"
)

func TestPrepareForCreate(t *testing.T) {
	s := New(validation.Options{})
	p := &dpcorev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}}
	s.PrepareForCreate(context.Background(), p)
	if p.Status.Phase != corev1.PodPending || p.Status.PodIP != "" || p.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("status after create %+v, want only phase Pending and the QoS class", p.Status)
	}
	if p.Spec.DNSPolicy != corev1.DNSClusterFirst || p.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("pod spec not defaulted: %+v", p.Spec.PodSpec)
	}
}

// TestFieldSet: every selectable field has a value, and a selector on each
// matches the pod that has it.
func TestFieldSet(t *testing.T) {
	var s Strategy
	p := &dpcorev1.Pod{}
	p.Spec.NodeName, p.Spec.HostNetwork, p.Status.Phase, p.Status.PodIP = "node-1", true, corev1.PodRunning, "10.244.1.5"
	set := s.FieldSet(p)
	if len(set) != len(s.SelectableFields()) {
		t.Fatalf("FieldSet has %d fields, SelectableFields %d", len(set), len(s.SelectableFields()))
	}
	for _, sel := range []string{"spec.nodeName=node-1", "spec.hostNetwork=true", "status.phase=Running", "status.podIP=10.244.1.5", "spec.nodeName!=node-2"} {
		if !fields.ParseSelectorOrDie(sel).Matches(set) {
			t.Errorf("%s does not match %v", sel, set)
		}
	}
}

// typicalPod is a pod as a Deployment's template makes them: two
// containers with ports, env, resources and probes, labels and an owner.
func typicalPod() *dpcorev1.Pod {
	c := func(name string, port int32) corev1.Container {
		return corev1.Container{
			Name: name, Image: "registry.example.com/team/" + name + ":1.4.2",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "production"}, {Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
		}
	}
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f8c6b5-x2x4z", Namespace: "prod", UID: "0d1f6c1e-5d7b-4f0e-9a4e-1c2b3d4e5f60",
		Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9f8c6b5"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8c6b5", UID: "5e1c", Controller: ptr.To(true)}}},
		Spec: dpcorev1.PodSpec{PodSpec: corev1.PodSpec{Containers: []corev1.Container{c("web", 8080), c("sidecar", 9090)}}}}
	return p
}

// BenchmarkValidateCreate is what a pod create costs in the strategy:
// defaults (PrepareForCreate) and every check (rest.ValidateCreate:
// upstream's validators on the internal pod, declarative validation, the
// pod DNS rules), without decoding, storage or encoding.
func BenchmarkValidateCreate(b *testing.B) {
	s := New(validation.Options{RelaxedDNSSearchValidation: true, PodDNSCustomPolicy: true, PodDNSAutopath: true})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := typicalPod()
		s.PrepareForCreate(ctx, p)
		if errs := rest.ValidateCreate(ctx, s, true, p); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkValidateUpdate is the same for an update that changes a label.
func BenchmarkValidateUpdate(b *testing.B) {
	s := New(validation.Options{RelaxedDNSSearchValidation: true, PodDNSCustomPolicy: true, PodDNSAutopath: true})
	ctx := context.Background()
	old := typicalPod()
	s.PrepareForCreate(ctx, old)
	old.ResourceVersion = "42"
	b.ReportAllocs()
	for b.Loop() {
		p := typicalPod()
		p.ResourceVersion, p.Labels["rev"] = "42", "2"
		s.PrepareForUpdate(ctx, p, old)
		if errs := rest.ValidateUpdate(ctx, s, true, p, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
