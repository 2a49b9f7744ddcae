package persistentvolume

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPhaseTransitionTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	client := metav1.NewTime(now.Add(-time.Minute))
	s := New()
	s.Now = func() time.Time { return now }

	created := &corev1.PersistentVolume{Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}
	s.PrepareForCreate(context.Background(), created)
	if created.Status.Phase != corev1.VolumePending || created.Status.LastPhaseTransitionTime == nil || !created.Status.LastPhaseTransitionTime.Time.Equal(now) {
		t.Errorf("created: %+v", created.Status)
	}

	for _, tc := range []struct {
		name       string
		oldPhase   corev1.PersistentVolumePhase
		newPhase   corev1.PersistentVolumePhase
		clientTime *metav1.Time
		want       time.Time
	}{
		{"phase kept, time omitted: the stored time stays", corev1.VolumePending, corev1.VolumePending, nil, earlier.Time},
		{"phase changed, time omitted: now", corev1.VolumePending, corev1.VolumeBound, nil, now},
		{"phase changed, stored time sent back: now", corev1.VolumePending, corev1.VolumeBound, &earlier, now},
		{"phase changed, client's own time: kept", corev1.VolumePending, corev1.VolumeBound, &client, client.Time},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := &corev1.PersistentVolume{Status: corev1.PersistentVolumeStatus{Phase: tc.oldPhase, LastPhaseTransitionTime: &earlier}}
			obj := &corev1.PersistentVolume{Status: corev1.PersistentVolumeStatus{Phase: tc.newPhase, LastPhaseTransitionTime: tc.clientTime}}
			s.PrepareForStatusUpdate(context.Background(), obj, old)
			if got := obj.Status.LastPhaseTransitionTime; got == nil || !got.Time.Equal(tc.want) {
				t.Errorf("lastPhaseTransitionTime %v, want %v", got, tc.want)
			}
		})
	}
}
