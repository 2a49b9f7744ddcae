package noderestriction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apiserver/pkg/admission"
)

// BenchmarkAdmitNodeStatus is the write every node agent repeats: its own
// Node's status, which the host converts to kube's internal Node for
// upstream's plugin (docs/apiserver.md#noderestriction).
func BenchmarkAdmitNodeStatus(b *testing.B) {
	p := hosted(b, config{Objects: store{}})
	n := node("node-a", map[string]string{"kubernetes.io/hostname": "node-a", "kubernetes.io/os": "linux"})
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	a := Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Subresource: "status", Name: "node-a", Object: n, OldObject: n.DeepCopy()}.record()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Admit(b.Context(), a, nil); err != nil {
			b.Fatal(err)
		}
	}
}
