package podserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
)

// outputDrain is how long a session's output is still copied after its
// command exited, for what a background process it left keeps writing:
// exec.Cmd's WaitDelay of the host path.
const outputDrain = 5 * time.Second

// runInSandbox runs argv as id in the sandbox of pod uid
// (internal/podsandbox): the session is the sandbox's child, in the pod's
// user, PID, UTS and mount namespaces. The streams stay here, so resizes
// and the remotecommand plumbing are the agent's.
func runInSandbox(ctx context.Context, stateDir string, uid types.UID, id podexec.Identity, argv []string,
	in io.Reader, out, errOut io.Writer, tty bool, resize <-chan remotecommand.TerminalSize) error {
	conn, err := podsandbox.DialSession(ctx, stateDir, uid)
	if err != nil {
		return fmt.Errorf("the pod's sandbox: %w", err)
	}
	defer conn.Close()
	req := podsandbox.Request{Argv: argv, Env: commandEnv(tty, id.UID), UID: id.UID, GID: id.GID, Groups: id.Groups, TTY: tty}
	var (
		send   []*os.File // the session's ends
		copies []<-chan struct{}
		reads  []*os.File // ours, closed when the drain is over
	)
	defer func() {
		for _, f := range append(send, reads...) {
			_ = f.Close()
		}
	}()
	copyOut := func(w io.Writer, r *os.File) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if w == nil {
				w = io.Discard
			}
			_, _ = io.Copy(w, r) // until every holder of the other end is gone (EOF, or EIO for a terminal)
		}()
		copies = append(copies, done)
		reads = append(reads, r)
	}
	if tty {
		ptmx, pts, err := openPTY()
		if err != nil {
			return err
		}
		send = append(send, pts)
		if resize != nil {
			go forwardResize(ptmx, resize)
		}
		if in != nil {
			go func() { _, _ = io.Copy(ptmx, in) }()
		}
		copyOut(out, ptmx)
	} else {
		stdin, err := os.Open(os.DevNull)
		if in != nil {
			var w *os.File
			stdin, w, err = os.Pipe()
			if err == nil {
				// Not waited for: a client that keeps stdin open must not
				// keep the session alive after the command exits.
				go func() {
					_, _ = io.Copy(w, in)
					_ = w.Close()
				}()
			}
		}
		if err != nil {
			return err
		}
		send = append(send, stdin)
		for _, w := range []io.Writer{out, errOut} {
			r, wr, err := os.Pipe()
			if err != nil {
				return err
			}
			send = append(send, wr)
			copyOut(w, r)
		}
	}
	err = podsandbox.Start(conn, req, send)
	// The session holds its ends now: ours would keep the output copies
	// from ever seeing EOF, and cost descriptors for the session's life.
	for _, f := range send {
		_ = f.Close()
	}
	send = nil
	if err != nil {
		return err
	}
	resp, err := podsandbox.Wait(ctx, conn)
	// One deadline for all the copies; the deferred close of our read
	// ends then ends those still running.
	drain, cancel := context.WithTimeout(context.Background(), outputDrain)
	defer cancel()
	for _, done := range copies {
		select {
		case <-done:
		case <-drain.Done():
		}
	}
	if err != nil {
		return err
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	if resp.ExitCode != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", resp.ExitCode), Code: resp.ExitCode}
	}
	return nil
}
