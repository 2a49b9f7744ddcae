package warmstack

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPUTime is the CPU time of every thread of the process
// (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)): the same user and system time
// bench/ divides by the queries answered.
func processCPUTime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
