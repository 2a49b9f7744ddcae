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
