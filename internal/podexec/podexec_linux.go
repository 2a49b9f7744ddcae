package podexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

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

// Restrict makes the calling thread, and the program it execs next, id: a
// privileged id keeps root's capabilities (only its user and groups change
// when it names some); any other loses every capability (effective,
// permitted, inheritable, ambient and the bounding set, so not even a
// setuid-root file or uid 0 gets one back at execve) and gets no_new_privs,
// as a container with allowPrivilegeEscalation false. Like Enter it works
// on the locked thread: no_new_privs, the bounding set and capset are
// per-thread, and execve makes them the program's.
func Restrict(id Identity) error {
	runtime.LockOSThread() // never unlocked, as in Enter
	if !id.Privileged {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("setting no_new_privs: %w", err)
		}
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("clearing the ambient capabilities: %w", err)
		}
		// Up to the kernel's last capability, which ends the loop with
		// EINVAL: newer kernels know more than x/sys names.
		for c := 0; ; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if errors.Is(err, unix.EINVAL) {
				break
			}
			if err != nil {
				return needsRoot("dropping the capability bounding set", err)
			}
		}
	}
	if id.Privileged && id.UID == 0 && id.GID == 0 && len(id.Groups) == 0 {
		return nil
	}
	groups := make([]int, len(id.Groups))
	for i, g := range id.Groups {
		groups[i] = int(g)
	}
	// syscall's set*id change every thread of the process (Go 1.16+), so
	// no thread is left with root's ids.
	if err := syscall.Setgroups(groups); err != nil {
		return needsRoot("setting the supplementary groups", err)
	}
	if err := syscall.Setresgid(int(id.GID), int(id.GID), int(id.GID)); err != nil {
		return needsRoot(fmt.Sprintf("setting group %d", id.GID), err)
	}
	if err := syscall.Setresuid(int(id.UID), int(id.UID), int(id.UID)); err != nil {
		return needsRoot(fmt.Sprintf("setting user %d", id.UID), err)
	}
	if id.Privileged {
		return nil
	}
	// A non-zero uid has lost its capabilities with setresuid; uid 0
	// (runAsUser: 0 without privileged) has not, so clear them all.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing the capabilities: %w", err)
	}
	return nil
}
