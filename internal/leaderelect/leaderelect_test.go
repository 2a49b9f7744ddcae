package leaderelect

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// fast keeps the tests short. NewLeaderElector wants lease > renew
// deadline > 1.2 × retry, and the Lease stores whole seconds
// (spec.leaseDurationSeconds): a shorter lease reads as expired at once.
var fast = Durations{Lease: time.Second, RenewDeadline: 500 * time.Millisecond, Retry: 100 * time.Millisecond}

func holder(t *testing.T, c *fake.Clientset) string {
	t.Helper()
	l, err := c.CoordinationV1().Leases("kube-system").Get(context.Background(), "test", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// poll waits up to 10 s for cond, in-process state or one lease read.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.PollEvery(t, what, 20*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) { return cond(), nil })
}

// TestRun: Run leads with lead while the lease is held and returns what
// the way it ended says: nil for a stop, lead's error, or ErrLeaseLost.
func TestRun(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	tests := []struct {
		name string
		// lead runs while leading; end ends the election from outside.
		lead    func(ctx context.Context) error
		end     func(cancel context.CancelFunc, c *fake.Clientset)
		wantErr error
		wantMsg string
		// released: the holder is cleared at the end (ReleaseOnCancel).
		released bool
	}{
		{
			name:     "stopped",
			lead:     func(ctx context.Context) error { <-ctx.Done(); return nil },
			end:      func(cancel context.CancelFunc, _ *fake.Clientset) { cancel() },
			released: true,
		},
		{
			name:     "lead fails",
			lead:     func(context.Context) error { return boom },
			end:      func(context.CancelFunc, *fake.Clientset) {},
			wantErr:  boom,
			released: true,
		},
		{
			name: "lease lost",
			lead: func(ctx context.Context) error { <-ctx.Done(); return nil },
			end: func(_ context.CancelFunc, c *fake.Clientset) {
				// Renewals fail from now on: the holder gives up after
				// the renew deadline.
				c.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("etcd is down")
				})
			},
			wantErr: ErrLeaseLost,
			wantMsg: "lost the lease kube-system/test",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := fake.NewClientset()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var led atomic.Bool
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, Config{Namespace: "kube-system", Name: "test", Identity: "me", Durations: fast, client: c},
					func(ctx context.Context) error { led.Store(true); return tt.lead(ctx) })
			}()
			poll(t, "leading", led.Load)
			tt.end(cancel, c)
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return")
			}
			if tt.wantErr == nil && err != nil || !errors.Is(err, tt.wantErr) {
				t.Errorf("Run = %v; want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && (err == nil || err.Error() != tt.wantMsg) {
				t.Errorf("Run = %v; want %q", err, tt.wantMsg)
			}
			if h := holder(t, c); tt.released && h != "" {
				t.Errorf("holder after Run = %q; want the lease released", h)
			}
		})
	}
}

// TestStandby: a second candidate waits while the first holds the lease
// and never leads; it returns nil when stopped.
func TestStandby(t *testing.T) {
	t.Parallel()
	c := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	go func() {
		first <- Run(ctx, Config{Namespace: "kube-system", Name: "test", Identity: "first", Durations: fast, client: c},
			func(ctx context.Context) error { <-ctx.Done(); return nil })
	}()
	poll(t, "first leads", func() bool { return holder(t, c) == "first" })
	standbyCtx, stopStandby := context.WithCancel(context.Background())
	var led atomic.Bool
	standby := make(chan error, 1)
	go func() {
		standby <- Run(standbyCtx, Config{Namespace: "kube-system", Name: "test", Identity: "second", Durations: fast, client: c},
			func(context.Context) error { led.Store(true); return nil })
	}()
	// Retries past the lease duration: the holder renews, so the
	// standby must not take over.
	deadline := time.Now().Add(2 * fast.Lease)
	poll(t, "two lease durations", func() bool { return time.Now().After(deadline) })
	if led.Load() || holder(t, c) != "first" {
		t.Fatalf("the standby led (holder %q) while the first held the lease", holder(t, c))
	}
	stopStandby()
	if err := <-standby; err != nil {
		t.Errorf("standby stopped with %v", err)
	}
	cancel()
	if err := <-first; err != nil {
		t.Errorf("first stopped with %v", err)
	}
}

// TestDefaultDurations are kube's.
func TestDefaultDurations(t *testing.T) {
	t.Parallel()
	if got, want := DefaultDurations(), (Durations{Lease: 15 * time.Second, RenewDeadline: 10 * time.Second, Retry: 2 * time.Second}); got != want {
		t.Errorf("DefaultDurations() = %+v; want %+v", got, want)
	}
}
