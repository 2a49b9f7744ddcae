package priority

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"
)

// BenchmarkAdmitPodCreate is what every pod create pays: the served pod
// converted to kube's internal Pod (a copy), upstream's lister lookup of
// its class, and the three fields copied back. The pod is one the
// ReplicaSet controller would create, resource requests included.
func BenchmarkAdmitPodCreate(b *testing.B) {
	p := hosted(b, system()...)
	tmpl := pod("system-cluster-critical")
	tmpl.GenerateName = "web-"
	tmpl.Labels["pod-template-hash"] = "5d9f7c6b8"
	tmpl.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	tmpl.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	tmpl.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	a := record(admission.Create, podsGVR, "", tmpl, nil)
	b.ReportAllocs()
	for b.Loop() {
		// As the create sent it: what the last round set is undone, so
		// every round computes and sets both.
		tmpl.Spec.Priority, tmpl.Spec.PreemptionPolicy = nil, nil
		if err := p.Admit(b.Context(), a, nil); err != nil {
			b.Fatal(err)
		}
	}
	if tmpl.Spec.Priority == nil || *tmpl.Spec.Priority != 2000000000 {
		b.Fatalf("priority %v, want 2000000000", tmpl.Spec.Priority)
	}
}

// BenchmarkAdmitPodUpdate is a main-resource pod update (labels, say):
// both pods converted, upstream keeping the stored priority, nothing read.
func BenchmarkAdmitPodUpdate(b *testing.B) {
	p := hosted(b, system()...)
	old := pod("system-cluster-critical")
	old.Spec.Priority = ptr.To[int32](2000000000)
	old.Spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	obj := old.DeepCopy()
	obj.Labels["tier"] = "front"
	a := record(admission.Update, podsGVR, "", obj, old)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Admit(b.Context(), a, nil); err != nil {
			b.Fatal(err)
		}
	}
}
