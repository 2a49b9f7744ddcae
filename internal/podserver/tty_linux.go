package podserver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// runTTY runs cmd on a new pseudo-terminal, as its session leader with the
// terminal as controlling terminal; in and out are the terminal's two
// directions and resize events set its size.
func runTTY(cmd *exec.Cmd, in io.Reader, out io.Writer, resize <-chan remotecommand.TerminalSize) error {
	ptmx, pts, err := openPTY()
	if err != nil {
		return err
	}
	defer ptmx.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	pts.Close() // the child has it
	if err != nil {
		return err
	}
	if resize != nil {
		go forwardResize(ptmx, resize)
	}
	if in != nil {
		go func() { _, _ = io.Copy(ptmx, in) }()
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		if out != nil {
			_, _ = io.Copy(out, ptmx) // ends with EIO once every holder of the pts is gone
		} else {
			_, _ = io.Copy(io.Discard, ptmx)
		}
	}()
	err = cmd.Wait()
	<-copied
	return err
}

// forwardResize sets the terminal's size on each resize event.
func forwardResize(ptmx *os.File, resize <-chan remotecommand.TerminalSize) {
	for size := range resize {
		_ = unix.IoctlSetWinsize(int(ptmx.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: size.Height, Col: size.Width})
	}
}

func openPTY() (ptmx, pts *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening a pseudo-terminal: %w", err)
	}
	ptmx = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("unlocking the pseudo-terminal: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("naming the pseudo-terminal: %w", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("opening the pseudo-terminal: %w", err)
	}
	return ptmx, pts, nil
}

// ownGroup makes the command lead its own process group (runTTY makes it a
// session leader, which is one too) and the end of its context kill the
// whole group: what a shell started in the background goes with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
}
