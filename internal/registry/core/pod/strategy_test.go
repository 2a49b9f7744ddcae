package pod

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
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
