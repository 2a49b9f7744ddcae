// Command dnsplane is the single binary of the dnsplane DNS control plane.
// This package only wires subcommands; the work lives in internal/ packages.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dnsplane/dnsplane/internal/cliexit"
	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal ends ctx and the ordered stop; a second one forces
	// the exit (startstop.go).
	// Not in the etcd member: it ignores signals and stops last, when
	// its parent closes its stdin (etcdmember.go).
	if len(os.Args) < 2 || os.Args[1] != etcdMemberCommand {
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		go forceOnSecond(sigs, os.Stderr, os.Exit, time.Now)
	}
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses shared by every subcommand (internal/cliexit: the
// data-plane commands, which dnsplane-dns runs too, return its errors).
const (
	exitOK      = cliexit.OK
	exitInvalid = cliexit.Invalid
	exitUsage   = cliexit.Usage
)

// exitError carries an exit status out of a cobra command; an empty message
// means the command already reported the problem. It is cliexit.Error
// under this package's older field names.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// run executes the command line and returns the process exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == podexec.Subcommand {
		// Not a cobra command: its arguments after "--" are the
		// command's, flags included, and it is nobody's to see in help.
		return runPodexec(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == podsandbox.Subcommand {
		return runPodsandbox(args[1:], stderr)
	}
	cmd := newRootCommand(stdin, stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	var ex *exitError
	if errors.As(err, &ex) {
		err = &cliexit.Error{Code: ex.code, Msg: ex.msg}
	}
	return cliexit.Status(err, stderr)
}
