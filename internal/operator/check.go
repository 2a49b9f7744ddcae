package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// CorefileError is the dry load's verdict that CoreDNS does not load a
// Corefile, with CoreDNS's reason. It is the only error of a Checker that
// says something about the Corefile: the operator remembers it, so that
// the same text is not checked again, and reports CorefileRejected. Any
// other error means the dry load gave no verdict (DryLoadError).
type CorefileError struct {
	// Reason is CoreDNS's error, which names the Corefile's line.
	Reason string
}

func (e *CorefileError) Error() string { return e.Reason }

// DryLoadError is a dry load that did not run to a verdict: the child
// process could not start (no binary, descriptors or memory exhausted),
// was killed, timed out, or failed for a reason of its own. It says
// nothing about the Corefile, so the operator retries it with backoff and
// reports DryLoadFailed instead of rejecting the Corefile.
type DryLoadError struct {
	Err error
}

func (e *DryLoadError) Error() string { return "the dry load did not run: " + e.Err.Error() }

func (e *DryLoadError) Unwrap() error { return e.Err }

// IsCorefileError reports whether err is a Checker's verdict that the
// Corefile does not load.
func IsCorefileError(err error) bool {
	var ce *CorefileError
	return errors.As(err, &ce)
}

// ExitCorefileRejected is the exit status of a dry-load child that ran
// CoreDNS's setup and found the Corefile does not load (dnsplane's
// exitInvalid). Every other status (a Go runtime failure exits 2, a
// signal has none) is a DryLoadError.
const ExitCorefileRejected = 1

// DefaultCheckTimeout bounds one dry load. The Corefile with the most
// forward plugins the API allows loads in well under a second
// (docs/dns-operator.md, "Size limits"); a child that takes this long is
// stuck, not checking.
const DefaultCheckTimeout = time.Minute

// ExecChecker dry-loads a Corefile in a child process: Path with Args,
// the Corefile on its standard input. Exit status 0 means it loads;
// ExitCorefileRejected, with the reason on standard error, means it does
// not; anything else is a DryLoadError. A child process because
// coredns.DryLoad refuses to run (and must not run) in a process that
// serves CoreDNS (docs/dns-operator.md, "The dry load").
// `dnsplane corefile-check` is such a child.
type ExecChecker struct {
	Path string
	Args []string
	// Env, when not nil, is the child's whole environment (exec.Cmd.Env).
	Env []string
	// Timeout bounds one check; 0 means DefaultCheckTimeout.
	Timeout time.Duration
}

// Check implements Checker.
func (c ExecChecker) Check(ctx context.Context, corefile []byte) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, c.Path, c.Args...)
	cmd.Env = c.Env
	// A grandchild holding standard error open must not hold the
	// operator past the timeout.
	cmd.WaitDelay = time.Second
	cmd.Stdin = bytes.NewReader(corefile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("dry-loading the Corefile: %w", ctx.Err())
	}
	// dnsplane prints "error: " before the reason.
	msg := strings.TrimPrefix(strings.TrimSpace(stderr.String()), "error: ")
	if cctx.Err() != nil {
		return &DryLoadError{Err: fmt.Errorf("%s was stopped after %s: %w", c.Path, timeout, cctx.Err())}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == ExitCorefileRejected && msg != "" {
		return &CorefileError{Reason: msg}
	}
	if msg != "" {
		err = fmt.Errorf("%w: %s", err, truncate(msg, maxChildMessage))
	}
	return &DryLoadError{Err: fmt.Errorf("running %s: %w", c.Path, err)}
}

// maxChildMessage bounds what a failed child's standard error adds to a
// DryLoadError: a crashed child prints its goroutines, and the message
// ends up in a condition (at most 32768 bytes) and an Event.
const maxChildMessage = 1024

// truncate is the start of s, at most n bytes of it: a Go crash names its
// cause on its first line, before the goroutines.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
