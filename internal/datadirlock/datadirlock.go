// Package datadirlock makes a data dir one process's: `dnsplane up` and
// `dnsplane apiserver` take an exclusive flock on <data-dir>/up.lock,
// holding their pid, before anything else touches the dir, so that a
// second one on the same dir fails at once and says which process holds it
// (docs/operations.md, "Errors at start-up"), instead of failing later in
// etcd's lock, the control socket or a port.
//
// flock, not a pid file alone: the kernel drops the lock when the process
// dies, so a crashed `up` never leaves the dir locked, and the pid in the
// file is only read to name the holder.
package datadirlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Name is the lock file's name in the data dir.
const Name = "up.lock"

// HeldError is a data dir another process holds.
type HeldError struct {
	Dir string
	// PID is the holder's, 0 when the file did not say.
	PID int
	// Holder describes it: "dnsplane up", "dnsplane apiserver", or its
	// command name from /proc.
	Holder string
}

func (e *HeldError) Error() string {
	who := "another process"
	switch {
	case e.PID > 0 && e.Holder != "":
		who = fmt.Sprintf("%s (pid %d)", e.Holder, e.PID)
	case e.PID > 0:
		who = fmt.Sprintf("another process (pid %d)", e.PID)
	}
	return fmt.Sprintf("data dir %s is in use by %s; stop it or choose another --data-dir", e.Dir, who)
}

// Lock is a held data dir lock.
type Lock struct {
	f    *os.File
	path string
	// created says this Lock created the file, which Release removes
	// again so that a refused start leaves the dir as it found it.
	created bool
}

// Acquire takes the lock of dir, which must exist, and writes our pid
// into it. A dir another process holds is a *HeldError.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, Name)
	for {
		_, statErr := os.Lstat(path)
		created := errors.Is(statErr, fs.ErrNotExist)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, fmt.Errorf("data dir lock: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil { //nolint:gosec // a descriptor fits an int
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, held(dir, path)
			}
			return nil, fmt.Errorf("data dir lock %s: %w", path, err)
		}
		// The holder before us may have removed the file (Release)
		// between our open and our flock: a lock on that unlinked file
		// holds nothing, so take the one on the path again.
		if same, err := samePath(f, path); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("data dir lock %s: %w", path, err)
		} else if !same {
			_ = f.Close()
			continue
		}
		if err := writePID(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("data dir lock %s: %w", path, err)
		}
		return &Lock{f: f, path: path, created: created}, nil
	}
}

// Release gives the lock back and removes the file when this Lock created
// it (a start that was refused leaves the dir as it was) or when clean
// (a stop in order: no stale file). It removes before it unlocks; an
// Acquire that opened the file before that notices (samePath).
func (l *Lock) Release(clean bool) error {
	var errs []error
	if clean || l.created {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, l.f.Close())
	return errors.Join(errs...)
}

func samePath(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	pi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// held describes the process holding path: the pid it wrote and, from
// /proc (best effort), what it runs.
func held(dir, path string) error {
	e := &HeldError{Dir: dir}
	data, err := os.ReadFile(path)
	if err != nil {
		return e
	}
	pid, err := ParsePID(data)
	if err != nil {
		return e
	}
	e.PID = pid
	e.Holder = describe(pid)
	return e
}

// ParsePID reads the pid a lock file holds: decimal digits and a newline.
func ParsePID(data []byte) (int, error) {
	s := strings.TrimSpace(string(data))
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != s {
		return 0, fmt.Errorf("not a pid: %q", s)
	}
	return pid, nil
}

// describe names the command of pid: "dnsplane up" when its arguments say
// so, else its command name, "" when /proc does not tell.
func describe(pid int) string {
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(cmdline) == 0 {
		return ""
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	name := filepath.Base(args[0])
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		return name + " " + args[1]
	}
	return name
}

// NotOwnedError is a data dir another user owns: its files (the etcd
// client key, the CA key, tokens.csv) would be readable or replaceable by
// that user, so dnsplane refuses to run in it.
type NotOwnedError struct {
	Dir      string
	UID, Own int
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("data dir %s is owned by uid %d, not by uid %d that runs dnsplane: "+
		"its owner could read its keys and tokens; choose a --data-dir of your own", e.Dir, e.UID, e.Own)
}

// CheckOwner refuses (*NotOwnedError) a dir, which must exist, that
// another user owns.
func CheckOwner(dir string) error {
	_, err := ownStat(dir)
	return err
}

func ownStat(dir string) (fs.FileInfo, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, &NotOwnedError{Dir: dir, UID: int(st.Uid), Own: os.Getuid()}
	}
	return fi, nil
}

// MakePrivate makes dir, which must exist, owner-only (0700): the data dir
// holds the CA key, etcd's client certificate and the token file, and a dir
// created beforehand with a umask's 0755 lets every local user list it
// (issue 29). It refuses a dir another user owns (*NotOwnedError). It
// returns the mode it had when it changed it, 0 when it was already 0700.
// Call it holding the lock, so that a refused start changes nothing.
func MakePrivate(dir string) (was fs.FileMode, err error) {
	fi, err := ownStat(dir)
	if err != nil {
		return 0, err
	}
	perm := fi.Mode().Perm()
	if perm == 0o700 {
		return 0, nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return 0, fmt.Errorf("data dir %s: making it owner-only: %w", dir, err)
	}
	return perm, nil
}

// Holder says which process holds dir's lock: a *HeldError describing it
// (its pid, 0 when the file does not say, and what it runs), or nil when
// none does. It never creates the file. To tell, it takes a shared lock
// for an instant: an Acquire racing it in that instant fails as if dir
// were in use, which only a start at the very moment of a `dnsplane
// status` can meet.
func Holder(dir string) (*HeldError, error) {
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) //nolint:gosec // a descriptor fits an int
	switch {
	case err == nil:
		return nil, nil // closing the file drops our lock
	case !errors.Is(err, syscall.EWOULDBLOCK):
		return nil, fmt.Errorf("data dir lock %s: %w", path, err)
	}
	var h *HeldError
	if errors.As(held(dir, path), &h) {
		return h, nil
	}
	return &HeldError{Dir: dir}, nil
}
