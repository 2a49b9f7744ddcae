//go:build !linux

package podexec

import (
	"errors"
	"fmt"
	"runtime"
)

// Enter fails: mount namespaces are Linux's.
func Enter(dir string) error {
	return fmt.Errorf("%w: creating a mount namespace: not supported on %s", ErrNeedsRoot, runtime.GOOS)
}

func execve(path string, argv, env []string) error {
	return errors.New("exec: not supported on " + runtime.GOOS)
}

// Restrict fails: there is nothing to run the command in (Enter fails).
func Restrict(Identity) error {
	return fmt.Errorf("%w: dropping privileges: not supported on %s", ErrNeedsRoot, runtime.GOOS)
}
