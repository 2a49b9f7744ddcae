package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/klog/v2"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/progress"
)

// spinnerInterval is how often the live status's spinner turns.
const spinnerInterval = 100 * time.Millisecond

// startProgress is the renderer of start-up on w: live when w is a
// terminal, plain lines otherwise (docs/operations.md, "Start-up").
func startProgress(w io.Writer) progress.Renderer {
	f, ok := w.(*os.File)
	live := ok && term.IsTerminal(int(f.Fd())) //nolint:gosec // a file descriptor fits an int
	r := progress.New(w, live)
	if live {
		// Upstream libraries that log without a context logger write
		// through klog's global logger straight to stderr; through the
		// renderer they do not tear the live line.
		klog.LogToStderr(false)
		klog.SetOutput(r.Writer(w))
	}
	return r
}

// runWithProgress is controlplane.Run with c.Progress told how start-up
// ended and, once it is under way, how stopping goes.
func runWithProgress(cmd *cobra.Command, c controlplane.Config, ready func(*controlplane.ControlPlane)) error {
	r, _ := c.Progress.(progress.Renderer)
	if r == nil {
		return controlplane.Run(cmd.Context(), c, ready)
	}
	spinCtx, stopSpinner := context.WithCancel(cmd.Context())
	defer stopSpinner()
	if live, ok := r.(*progress.Live); ok {
		go live.Run(spinCtx, spinnerInterval)
	}
	t0 := time.Now()
	started := false
	finished := make(chan struct{})
	// stopping gets the time the stop began, once said (sayStopping).
	stopping := make(chan time.Time, 1)
	err := controlplane.Run(cmd.Context(), c, func(cp *controlplane.ControlPlane) {
		started = true
		stopSpinner()
		r.Ready(time.Since(t0))
		ready(cp)
		go sayStopping(cmd.Context(), finished, cmd.ErrOrStderr(), stopping)
	})
	close(finished)
	if !started {
		stopSpinner()
		r.Failed()
		return err
	}
	if since, ok := <-stopping; ok {
		fmt.Fprintf(cmd.ErrOrStderr(), "stopped in %.2fs\n", time.Since(since).Seconds())
	}
	return err
}

// sayStopping tells the user, once ctx ends (the first SIGINT or SIGTERM,
// main.go), that the stop is under way and how to force it, and sends the
// time on stopping; it closes stopping either way.
func sayStopping(ctx context.Context, finished <-chan struct{}, w io.Writer, stopping chan<- time.Time) {
	defer close(stopping)
	select {
	case <-ctx.Done():
		fmt.Fprintln(w, stoppingLine)
		stopping <- time.Now()
	case <-finished:
	}
}

// forceOnSecond waits for the signals main registers: the first one has
// already cancelled the command's context (signal.NotifyContext), so a
// second one means the user does not want to wait for the ordered stop.
// It exits at once with the status a shell reports for a process the
// signal killed (128+n: 130 for SIGINT, 143 for SIGTERM); the embedded
// etcd child gets SIGKILL from the kernel (Pdeathsig, internal/etcdproc),
// and etcd is crash-safe (docs/operations.md, "Stopping").
//
// A second signal within duplicateWindow of the first is the same one
// delivered twice, not a user's decision: GNU timeout, for one, signals
// the process and then its process group.
func forceOnSecond(sigs <-chan os.Signal, w io.Writer, exit func(int), now func() time.Time) {
	<-sigs
	first := now()
	var sig os.Signal
	for sig = range sigs {
		if now().Sub(first) >= duplicateWindow {
			break
		}
	}
	n := 1
	if s, ok := sig.(syscall.Signal); ok {
		n = int(s)
	}
	fmt.Fprintf(w, "forced exit: a second %s before the stop ended; components were not stopped in order\n", sigName(sig))
	exit(128 + n)
}

// duplicateWindow is how soon after the first signal a second one counts
// as a duplicate; a person pressing Ctrl-C twice is slower.
const duplicateWindow = 100 * time.Millisecond

// sigName is how the user sent sig.
func sigName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "interrupt (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// stoppingLine is printed when the first signal arrives; a second one
// forces the exit (main.go).
const stoppingLine = "stopping (press Ctrl-C again to force)"
