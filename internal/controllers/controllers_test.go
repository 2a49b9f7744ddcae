package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFirstDiscovery: the namespace controller's constructor never sees a
// discovery that lists nothing (upstream would exit the process); later
// calls go to discovery itself.
func TestFirstDiscovery(t *testing.T) {
	t.Parallel()
	lists := []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}}}}
	for _, tt := range []struct {
		name     string
		failures int // discovery calls that find nothing before one that lists
		cancel   bool
		wantErr  bool
	}{
		{name: "at once"},
		{name: "after failures", failures: 2},
		{name: "stopped before it answers", failures: 1 << 30, cancel: true, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			discover := func() ([]*metav1.APIResourceList, error) {
				calls++
				if calls <= tt.failures {
					return nil, errors.New("connection refused")
				}
				return lists, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			fn, err := firstDiscovery(ctx, discover, time.Millisecond)
			if (err != nil) != tt.wantErr {
				t.Fatalf("firstDiscovery: %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got, err := fn(); err != nil || len(got) != 1 || calls != tt.failures+1 {
				t.Errorf("first call: %v %v after %d discoveries", got, err, calls)
			}
			if _, err := fn(); err != nil || calls != tt.failures+2 {
				t.Errorf("second call did not discover again: %v, %d calls", err, calls)
			}
		})
	}
}
