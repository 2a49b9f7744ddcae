//go:build !linux

package podserver

import (
	"errors"
	"io"
	"os"
	"os/exec"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

func runTTY(*exec.Cmd, io.Reader, io.Writer, <-chan remotecommand.TerminalSize) error {
	return errors.New("a terminal (-t) needs Linux")
}

// ownGroup leaves the command as it is: process groups are Unix's, and
// exec's default cancel kills the command itself.
func ownGroup(*exec.Cmd) {}

func openPTY() (*os.File, *os.File, error) {
	return nil, nil, errors.New("a terminal (-t) needs Linux")
}

func forwardResize(*os.File, <-chan remotecommand.TerminalSize) {}
