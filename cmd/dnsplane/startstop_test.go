package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestForceOnSecond: the first signal is the ordered stop's (main's
// NotifyContext); a duplicate of it (GNU timeout signals the process and
// its group) is ignored; the second exits at once with the status a shell
// reports for a process the signal killed, saying so.
func TestForceOnSecond(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		first, second os.Signal
		code          int
		line          string
	}{
		{"ctrl-c twice", os.Interrupt, os.Interrupt, 130, "forced exit: a second interrupt (Ctrl-C) before the stop ended; components were not stopped in order\n"},
		{"sigterm twice", syscall.SIGTERM, syscall.SIGTERM, 143, "forced exit: a second SIGTERM before the stop ended; components were not stopped in order\n"},
		{"sigterm then ctrl-c", syscall.SIGTERM, os.Interrupt, 130, "forced exit: a second interrupt (Ctrl-C) before the stop ended; components were not stopped in order\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The first signal, its duplicate 1ms later (ignored), then
			// the user's second 1s later.
			sigs := make(chan os.Signal, 3)
			sigs <- tt.first
			sigs <- tt.first
			sigs <- tt.second
			var out strings.Builder
			exited := make(chan int, 1)
			clock := []time.Time{time.Unix(0, 0), time.Unix(0, int64(time.Millisecond)), time.Unix(1, 0)}
			now := func() time.Time { t := clock[0]; clock = clock[1:]; return t }
			forceOnSecond(sigs, &out, func(code int) { exited <- code }, now)
			if code := <-exited; code != tt.code || out.String() != tt.line {
				t.Errorf("exit %d, %q; want %d, %q", code, out.String(), tt.code, tt.line)
			}
		})
	}
}
