package pod

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name      string
		node      string
		own       *int64
		phase     corev1.PodPhase
		requested *int64
		want      int64
	}{
		{"default", "n1", nil, corev1.PodRunning, nil, 30},
		{"pod's own", "n1", ptr.To[int64](5), corev1.PodRunning, nil, 5},
		{"requested wins", "n1", ptr.To[int64](5), corev1.PodRunning, ptr.To[int64](2), 2},
		{"zero forces", "n1", nil, corev1.PodRunning, ptr.To[int64](0), 0},
		{"negative is 1", "n1", nil, corev1.PodRunning, ptr.To[int64](-1), 1},
		{"unbound", "", ptr.To[int64](5), corev1.PodPending, nil, 0},
		{"succeeded", "n1", nil, corev1.PodSucceeded, nil, 0},
		{"failed", "n1", nil, corev1.PodFailed, ptr.To[int64](9), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &dpcorev1.Pod{}
			p.Spec.NodeName, p.Spec.TerminationGracePeriodSeconds, p.Status.Phase = tc.node, tc.own, tc.phase
			if got := (Strategy{}).GracePeriod(context.Background(), p, tc.requested); got != tc.want {
				t.Errorf("GracePeriod = %d, want %d", got, tc.want)
			}
		})
	}
}
