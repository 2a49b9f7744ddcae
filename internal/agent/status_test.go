package agent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDesiredStatus(t *testing.T) {
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example"}}}
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	in := statusInput{hostIP: "127.0.0.1", podIP: "10.244.0.2", dir: "/d", now: t0}
	first := desiredStatus(spec, corev1.PodStatus{QOSClass: corev1.PodQOSBestEffort}, in)
	if first.Phase != corev1.PodRunning || first.PodIP != "10.244.0.2" || first.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("first status: %+v", first)
	}
	cs := first.ContainerStatuses[0]
	if !cs.Ready || cs.State.Running == nil || cs.ContainerID != "dnsplane://no-container/app" || cs.Image != "example" || cs.ImageID != "" {
		t.Fatalf("container status: %+v", cs)
	}
	for _, c := range first.Conditions {
		if c.Status != corev1.ConditionTrue {
			t.Errorf("condition %s = %s", c.Type, c.Status)
		}
	}
	// A resync later computes the same status: nothing to write.
	in.now = t1
	if again := desiredStatus(spec, first, in); !statusEqual(first, again) {
		t.Errorf("resync changed the status:\n%+v\n%+v", first, again)
	}
	// A DNS error: Pending, no IP, DNSConfigured False with the cause.
	in.failure = &podFailure{ReasonFailedCreatePodSandBox, `the pod's resolv.conf cannot be formed: option "a b" contains whitespace`}
	bad := desiredStatus(spec, first, in)
	if bad.Phase != corev1.PodPending || bad.PodIP != "" || len(bad.PodIPs) != 0 {
		t.Fatalf("error status: %+v", bad)
	}
	var found bool
	for _, c := range bad.Conditions {
		if c.Type == ConditionDNSConfigured {
			found = c.Status == corev1.ConditionFalse && c.Reason == ReasonFailedCreatePodSandBox && c.LastTransitionTime == t1
		}
	}
	if !found {
		t.Errorf("no DNSConfigured=False condition: %+v", bad.Conditions)
	}
}

// A pod over the node's pods capacity gets kubelet's rejection: Failed,
// OutOfpods, "Pod was rejected: " and kubelet's message.
func TestRejectedStatus(t *testing.T) {
	t.Parallel()
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gate := corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionTrue}
	msg := outOfPodsMessage(253, 253)
	if want := "Node didn't have enough resource: pods, requested: 1, used: 253, capacity: 253"; msg != want {
		t.Fatalf("message %q, want kubelet's %q", msg, want)
	}
	s := rejectedStatus(corev1.PodStatus{QOSClass: corev1.PodQOSBestEffort, Conditions: []corev1.PodCondition{gate}}, ReasonOutOfPods, msg, t0)
	if s.Phase != corev1.PodFailed || s.Reason != "OutOfpods" || s.Message != "Pod was rejected: "+msg || s.QOSClass != corev1.PodQOSBestEffort || s.PodIP != "" {
		t.Fatalf("status %+v", s)
	}
	if len(s.Conditions) != 2 || s.Conditions[0] != gate {
		t.Fatalf("conditions %+v", s.Conditions)
	}
	if c := s.Conditions[1]; c.Type != ConditionDNSConfigured || c.Status != corev1.ConditionFalse || c.Reason != ReasonOutOfPods || c.Message != msg {
		t.Errorf("condition %+v", c)
	}
	// Computed again later: equal, so nothing is written.
	if again := rejectedStatus(s, ReasonOutOfPods, msg, metav1.NewTime(t0.Add(time.Minute))); !statusEqual(s, again) {
		t.Errorf("not stable:\n%+v\n%+v", s, again)
	}
}
