package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ExecChecker dry-loads a Corefile in a child process: Path with Args,
// the Corefile on its standard input. Exit status 0 means it loads; any
// other, with the reason on standard error, means it does not. A child
// process because coredns.DryLoad refuses to run (and must not run) in a
// process that serves CoreDNS (docs/dns-operator.md, "The dry load").
// `dnsplane corefile-check` is such a child.
type ExecChecker struct {
	Path string
	Args []string
}

// Check implements Checker.
func (c ExecChecker) Check(ctx context.Context, corefile []byte) error {
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
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
	var exit *exec.ExitError
	if errors.As(err, &exit) && msg != "" {
		return errors.New(msg)
	}
	return fmt.Errorf("dry-loading the Corefile with %s: %w: %s", c.Path, err, msg)
}
