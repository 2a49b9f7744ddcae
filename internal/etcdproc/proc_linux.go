package etcdproc

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal has the kernel kill the member if the parent dies
// without closing its stdin first (SIGKILL of the parent): a member left
// running would hold the data dir lock and block the next start.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
