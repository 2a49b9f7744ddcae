//go:build !linux

package e2e

import "os/exec"

// dieWithParent is a no-op where there is no parent-death signal; the
// cleanups still kill every child.
func dieWithParent(*exec.Cmd) {}
