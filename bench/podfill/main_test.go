package main

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recorder is a podClient that keeps what it was asked to create.
type recorder struct{ created []*corev1.Pod }

func (r *recorder) Create(_ context.Context, p *corev1.Pod, _ metav1.CreateOptions) (*corev1.Pod, error) {
	r.created = append(r.created, p)
	return p.DeepCopy(), nil
}

func (r *recorder) UpdateStatus(_ context.Context, p *corev1.Pod, _ metav1.UpdateOptions) (*corev1.Pod, error) {
	return p, nil
}

func TestFillLabels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		i, groups int
		wantGroup string // "" for no group label
	}{
		{name: "no groups", i: 7, groups: 0},
		{name: "first group", i: 0, groups: 200, wantGroup: "g0"},
		{name: "wraps", i: 205, groups: 200, wantGroup: "g5"},
		{name: "one group", i: 999, groups: 1, wantGroup: "g0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{}
			if _, err := fill(context.Background(), r, tc.i, "node-1", tc.groups); err != nil {
				t.Fatal(err)
			}
			labels := r.created[0].Labels
			if labels["app"] != "podfill" {
				t.Errorf("app label = %q, want podfill", labels["app"])
			}
			got, ok := labels["group"]
			if tc.wantGroup == "" && ok {
				t.Errorf("group label %q, want none", got)
			}
			if tc.wantGroup != "" && got != tc.wantGroup {
				t.Errorf("group label = %q, want %q", got, tc.wantGroup)
			}
		})
	}
}
