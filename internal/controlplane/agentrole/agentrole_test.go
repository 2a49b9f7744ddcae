package agentrole

import (
	"testing"
	"time"
)

// TestRenewIntervalFor: a grace period shorter than kube's keeps kubelet's
// ratio of five renewals within it, so that a healthy node is never
// Ready=Unknown between two renewals (up --node-monitor-grace-period 5s
// renewed every 10s, and the nodes that ran flapped).
func TestRenewIntervalFor(t *testing.T) {
	t.Parallel()
	for grace, want := range map[time.Duration]time.Duration{
		0:                      0,
		50 * time.Second:       0,
		40 * time.Second:       8 * time.Second,
		5 * time.Second:        time.Second,
		100 * time.Millisecond: 100 * time.Millisecond,
	} {
		got := RenewIntervalFor(grace)
		if got != want {
			t.Errorf("RenewIntervalFor(%v) = %v, want %v", grace, got, want)
		}
		renew := got
		if renew == 0 {
			renew = 10 * time.Second
		}
		if grace > 0 && grace > 500*time.Millisecond && renew*5 > grace {
			t.Errorf("grace %v: renewing every %v leaves less than five renewals in it", grace, renew)
		}
	}
}
