package filters

import (
	"testing"
	"time"
)

func TestLimitsValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultLimits().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (Limits{}).Validate(); err != nil {
		t.Errorf("all unlimited: %v", err)
	}
	err := Limits{MaxRequestsInflight: -1, RequestTimeout: -time.Second}.Validate()
	want := "--max-requests-inflight can not be negative value\n--request-timeout can not be negative value"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	// The per-user counts take -1 for unlimited; the queue and the
	// durations do not.
	if err := (Limits{MaxListsPerUser: -1, MaxWatchesPerUser: -1}).Validate(); err != nil {
		t.Errorf("unlimited per-user counts: %v", err)
	}
	err = Limits{UserQueueLength: -1, UserQueueWait: -time.Second, WatchWriteTimeout: -time.Second}.Validate()
	want = "the per-user queue length can not be negative\nthe per-user queue wait can not be negative\nthe watch write timeout can not be negative"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
