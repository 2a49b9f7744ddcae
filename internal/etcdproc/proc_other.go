//go:build !linux

package etcdproc

import "os/exec"

// setParentDeathSignal: elsewhere the member notices its parent is gone when
// its stdin reaches EOF.
func setParentDeathSignal(*exec.Cmd) {}
