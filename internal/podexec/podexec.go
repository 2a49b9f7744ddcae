// Package podexec is who an exec session of a pod runs as (IdentityOf)
// and the last step of every session: no capabilities and no_new_privs
// unless the container is privileged, then the pod's user and groups
// (Restrict), then execve.
//
// An unprivileged pod's sessions run in its sandbox (internal/podsandbox,
// docs/exec.md), whose last step is ExecAs. A privileged container's, which
// the API server admits only under --allow-privileged, run on the host as
// root: the hidden subcommand (Subcommand) unshares a private mount
// namespace on its locked thread, bind-mounts the pod's resolv.conf and
// hosts, as the node agent writes them (internal/podfiles), read-only on
// /etc/resolv.conf and /etc/hosts, the way kubelet bind-mounts them into a
// container, and execs the command. Nothing else is isolated for it. A Go
// program cannot safely unshare a mount namespace for a child it starts
// with os/exec and then mount inside it, hence the subcommand: `dnsplane
// exec` execs it in place; the agent's exec server starts it as a child
// with pipes (Command).
package podexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// Subcommand is the hidden dnsplane subcommand: `dnsplane __podexec
// [--user=UID:GID] [--groups=G,...] [--privileged] DIR -- CMD [ARG...]`.
const Subcommand = "__podexec"

// ErrNeedsRoot is wrapped by the errors of Enter when the process may not
// create a mount namespace or mount (not Linux, or not root).
var ErrNeedsRoot = errors.New("dnsplane exec needs root on Linux")

// Exit statuses of the subcommand when it cannot run the command, as
// shells and container runtimes use them.
const (
	ExitCannotRun = 126 // found but not executable, or set-up failed
	ExitNotFound  = 127 // no such command
)

// CheckFiles reports whether dir holds both of the pod's files; the error
// names the first one missing.
func CheckFiles(dir string) error {
	for _, name := range []string{podfiles.ResolvConf, podfiles.Hosts} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", filepath.Join(dir, name))
		}
	}
	return nil
}

// Command returns the command that runs argv as id with dir's files in
// place: prefix (the argv that starts dnsplane, e.g. /proc/self/exe)
// followed by Subcommand, id's flags, dir, "--" and argv.
func Command(ctx context.Context, prefix []string, dir string, id Identity, argv []string) *exec.Cmd {
	args := append([]string{}, prefix[1:]...)
	args = append(args, Subcommand)
	args = append(args, Args(dir, id, argv)...)
	return exec.CommandContext(ctx, prefix[0], args...)
}

// DefaultPrefix is the argv prefix that starts the running dnsplane binary
// again: /proc/self/exe, which stays right when the binary was replaced
// on disk.
func DefaultPrefix() []string { return []string{"/proc/self/exe"} }

// Args is the subcommand's argument list after Subcommand for a command
// argv run as id with dir's files: what Command passes and ParseArgs reads.
func Args(dir string, id Identity, argv []string) []string {
	args := append(id.args(), dir, "--")
	return append(args, argv...)
}

// ParseArgs splits the subcommand's arguments: the identity flags, DIR --
// CMD [ARG...]. Without --user the command runs as Nobody: forgetting the
// flag must not run it as root.
func ParseArgs(args []string) (dir string, id Identity, argv []string, err error) {
	id = Identity{UID: Nobody, GID: Nobody}
	for len(args) > 0 {
		ok, err := parseIdentityFlag(&id, args[0])
		if err != nil {
			return "", Identity{}, nil, err
		}
		if !ok {
			break
		}
		args = args[1:]
	}
	if len(args) < 3 || args[1] != "--" || args[0] == "" || strings.HasPrefix(args[0], "-") {
		return "", Identity{}, nil, fmt.Errorf("usage: dnsplane %s [--user=UID:GID] [--groups=GID,...] [--privileged] DIR -- COMMAND [ARG...]", Subcommand)
	}
	return args[0], id, args[2:], nil
}

// Main is the subcommand: it enters a mount namespace with dir's files on
// /etc and execs argv, so it returns only on failure, with the status to
// exit with and the error to print.
func Main(args []string) (int, error) {
	dir, id, argv, err := ParseArgs(args)
	if err != nil {
		return 2, err
	}
	if err := CheckFiles(dir); err != nil {
		return ExitCannotRun, fmt.Errorf("pod files: %w", err)
	}
	if err := Enter(dir); err != nil {
		return ExitCannotRun, err
	}
	// After the mounts, which need root, and on the same locked thread
	// that execs: the capability bounding set and no_new_privs are
	// per-thread until execve makes them the command's.
	if err := Restrict(id); err != nil {
		return ExitCannotRun, err
	}
	// Looked up after the mounts, in the environment the command gets.
	return lookAndExec(argv)
}

// ExecAs is a session's last step inside its pod's sandbox
// (internal/podsandbox), which has set up the mounts already: `[--user=UID:GID]
// [--groups=GID,...] -- CMD [ARG...]` drops every capability, sets
// no_new_privs and the identity (Restrict), and execs the command. A
// --privileged flag is refused: privileged pods do not run in a sandbox.
// Like Main it returns only on failure.
func ExecAs(args []string) (int, error) {
	id := Identity{UID: Nobody, GID: Nobody}
	dir := ""
	for len(args) > 0 && args[0] != "--" {
		if d, ok := strings.CutPrefix(args[0], ChdirFlag); ok {
			dir, args = d, args[1:]
			continue
		}
		ok, err := parseIdentityFlag(&id, args[0])
		if err != nil {
			return 2, err
		}
		if !ok || id.Privileged {
			return 2, fmt.Errorf("session: unexpected argument %q", args[0])
		}
		args = args[1:]
	}
	if len(args) < 2 {
		return 2, errors.New("session: want [--user=UID:GID] [--groups=GID,...] -- COMMAND [ARG...]")
	}
	argv := args[1:]
	if err := Restrict(id); err != nil {
		return ExitCannotRun, err
	}
	// As the pod's user: a directory it may not enter is not entered.
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintf(os.Stderr, "dnsplane: the pod's user cannot enter %s (%v): running in /\n", dir, err)
		}
	}
	return lookAndExec(argv)
}

// lookAndExec execs argv[0], found on PATH, with the process's
// environment; it returns only on failure, with the status to exit with
// (ExitNotFound or ExitCannotRun).
func lookAndExec(argv []string) (int, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return ExitNotFound, err
	}
	err = execve(path, argv, os.Environ())
	if errors.Is(err, os.ErrNotExist) {
		return ExitNotFound, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	return ExitCannotRun, fmt.Errorf("exec %s: %w", argv[0], err)
}

// ChdirFlag names the working directory of ExecAs's command.
const ChdirFlag = "--chdir="

// IdentityArgs are the identity flags of id, as ExecAs reads them.
func IdentityArgs(id Identity) []string { return id.args() }
