package podexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// Enter moves the calling thread into a new mount namespace, private all
// the way down, and bind-mounts dir's resolv.conf and hosts read-only on
// /etc/resolv.conf and /etc/hosts. The thread stays locked: the caller is
// expected to exec (which carries the thread's namespace into the new
// program) or exit, never to return the thread to the Go scheduler.
func Enter(dir string) error { return enter(dir, "/etc") }

func enter(dir, etc string) error {
	runtime.LockOSThread() // never unlocked: the namespace is this thread's
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return needsRoot("creating a mount namespace", err)
	}
	// Without this, the bind mounts below would propagate to the host's
	// namespace when / is a shared mount (systemd makes it so).
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return needsRoot("making / private", err)
	}
	for _, name := range []string{podfiles.ResolvConf, podfiles.Hosts} {
		if err := bindReadOnly(filepath.Join(dir, name), filepath.Join(etc, name)); err != nil {
			return err
		}
	}
	return nil
}

// bindReadOnly bind-mounts src on target read-only. A target that is a
// symlink (systemd-resolved's /etc/resolv.conf -> ../run/systemd/resolve/
// stub-resolv.conf) is resolved first and its final file covered, so every
// path to it reads the pod's file; a dangling one is an error, because
// creating its target would change the host's file system.
func bindReadOnly(src, target string) error {
	resolved, err := filepath.EvalSymlinks(target)
	if err != nil {
		return fmt.Errorf("bind-mounting %s on %s: %w", src, target, err)
	}
	if fi, err := os.Stat(resolved); err != nil {
		return fmt.Errorf("bind-mounting %s on %s: %w", src, target, err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("bind-mounting %s on %s: %s is not a regular file", src, target, resolved)
	}
	if err := unix.Mount(src, resolved, "", unix.MS_BIND, ""); err != nil {
		return needsRoot(fmt.Sprintf("bind-mounting %s on %s", src, resolved), err)
	}
	// MS_RDONLY is ignored on the first bind; it takes a remount.
	if err := unix.Mount("", resolved, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		return needsRoot(fmt.Sprintf("making %s read-only", resolved), err)
	}
	return nil
}

func needsRoot(what string, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("%w: %s: %w", ErrNeedsRoot, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func execve(path string, argv, env []string) error { return unix.Exec(path, argv, env) }
