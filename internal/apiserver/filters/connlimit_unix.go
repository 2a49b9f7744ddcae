//go:build unix

package filters

import (
	"fmt"
	"syscall"
)

// descriptorLimit is the process's soft RLIMIT_NOFILE: the number of
// descriptors it may have open. Go raises the soft limit to the hard one at
// start (since Go 1.19), so this is the hard limit the process was given.
func descriptorLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("getrlimit RLIMIT_NOFILE: %w", err)
	}
	return rl.Cur, nil
}
