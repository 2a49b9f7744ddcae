//go:build !linux

package podserver

import (
	"errors"
	"io"
	"os/exec"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

func runTTY(*exec.Cmd, io.Reader, io.Writer, <-chan remotecommand.TerminalSize) error {
	return errors.New("a terminal (-t) needs Linux")
}

// ownGroup leaves the command as it is: process groups are Unix's, and
// exec's default cancel kills the command itself.
func ownGroup(*exec.Cmd) {}
