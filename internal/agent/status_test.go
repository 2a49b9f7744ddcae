package agent

import (
	"errors"
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
	in.dnsError = errors.New("option \"a b\" contains whitespace")
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
