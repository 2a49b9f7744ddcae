package podsandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// The descriptors the agent hands the sandbox process (ExtraFiles).
const (
	fdListener   = 3 + iota // the session socket, listening
	fdLock                  // the user namespace range's lock (Allocator)
	fdPodDir                // the pod's directory (podfiles.Dir), O_PATH
	sandboxFiles = iota
)

// spec is the sandbox's configuration, its one argument.
type spec struct {
	Hostname string   `json:"hostname"`
	MountDir string   `json:"mountDir"`
	Hide     []string `json:"hide,omitempty"`
}

// Main is the hidden subcommand: `sandbox SPEC` is the pod's sandbox
// process, `session FLAGS -- CMD...` a session's last step
// (podexec.ExecAs). It returns only on failure, with the exit status.
func Main(args []string) (int, error) {
	if len(args) > 0 && args[0] == "session" {
		return podexec.ExecAs(args[1:])
	}
	if len(args) != 2 || args[0] != "sandbox" {
		return 2, fmt.Errorf("usage: dnsplane %s sandbox SPEC | session [--user=UID:GID] [--groups=GID,...] -- COMMAND [ARG...]", Subcommand)
	}
	var sp spec
	if err := json.Unmarshal([]byte(args[1]), &sp); err != nil {
		return 2, fmt.Errorf("sandbox spec: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// A session that is the pod's root may signal its PID 1, and the
	// kernel delivers what PID 1 handles: Go's handlers would end the
	// sandbox, and every session of the pod with it. The agent ends it
	// with SIGKILL, which no handler sees.
	signal.Ignore(unix.SIGHUP, unix.SIGINT, unix.SIGTERM, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGPIPE)
	for fd := 3; fd < 3+sandboxFiles; fd++ {
		// Sessions must not inherit the listener (it runs commands as the
		// sandbox's root), the range's lock nor the pod's files.
		unix.CloseOnExec(fd)
	}
	files := &podFiles{}
	if err := setUp(sp, files, log); err != nil {
		return podexec.ExitCannotRun, err
	}
	ln, err := net.FileListener(os.NewFile(fdListener, "listener"))
	if err != nil {
		return podexec.ExitCannotRun, fmt.Errorf("session socket: %w", err)
	}
	ul, ok := ln.(*net.UnixListener)
	if !ok {
		return podexec.ExitCannotRun, fmt.Errorf("session socket: %T is not a unix socket", ln)
	}
	s := &sandbox{log: log, files: files, waiters: map[int]chan syscall.WaitStatus{}}
	go s.reap()
	return podexec.ExitCannotRun, s.serve(ul)
}

// setUp is the sandbox's one-time set-up, as root of its user namespace:
// the hostname, the pod's files on /etc, the agent's files hidden, and a
// /proc of its own PID namespace.
func setUp(sp spec, podFiles *podFiles, log *slog.Logger) error {
	if sp.Hostname != "" { // "" keeps the host's UTS namespace
		if err := unix.Sethostname([]byte(sp.Hostname)); err != nil {
			return fmt.Errorf("setting the hostname %q: %w", sp.Hostname, err)
		}
	}
	// Nothing below may propagate to the host's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	// The copies' tmpfs: only this process's root writes it, and nothing
	// in it is left but what the mounts hold.
	if err := unix.Mount("tmpfs", sp.MountDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4m,mode=0700"); err != nil {
		return fmt.Errorf("mounting a tmpfs on %s for the pod's files: %w", sp.MountDir, err)
	}
	podFiles.dir = sp.MountDir
	if err := podFiles.refresh(); err != nil {
		return err
	}
	for _, dir := range sp.Hide {
		// Read-only and empty: the data dir (tokens, keys, etcd) and the
		// agent's state dir (other pods' files, the sandboxes' sockets).
		// A dir under one this user cannot traverse is out of reach anyway.
		err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
		if err != nil {
			log.Debug("not hiding a directory", "dir", dir, "err", err)
		}
	}
	// The PID namespace's own /proc: sessions see the pod's processes
	// only. The kernel refuses it when the host's /proc is partly
	// covered (mount_too_revealing); the user namespace still keeps
	// other pods' processes out of reach.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		log.Warn("cannot mount a /proc for the pod's PID namespace: sessions see the host's process list, though other pods' processes stay out of their reach (another user)", "err", err)
	}
	return nil
}

// podFiles keeps the pod's resolv.conf and hosts on /etc the agent's
// latest. The agent's files are in its mount namespace, from which the
// kernel refuses to bind-mount into this one (do_loopback's check_mnt), so
// the sandbox copies them into a tmpfs of its own (on spec.MountDir) and
// bind-mounts the copies. The agent rewrites a file by renaming a new one
// over it; refresh notices by its inode and mounts a new copy for the
// sessions started after.
type podFiles struct {
	dir    string // the tmpfs of the copies
	mu     sync.Mutex
	gen    int
	source [2]unix.Stat_t // of the copies mounted now
}

// refresh (re)mounts each of the pod's files whose source changed since it
// was copied. The sources come through the pod's directory the agent
// opened (fdPodDir): its path is inside a 0700 data dir this user cannot
// traverse, and hidden below.
func (p *podFiles) refresh() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, f := range []struct{ name, target string }{
		{podfiles.ResolvConf, "/etc/resolv.conf"}, {podfiles.Hosts, "/etc/hosts"},
	} {
		src, err := os.Open(fmt.Sprintf("/proc/self/fd/%d/%s", fdPodDir, f.name))
		if err != nil {
			return fmt.Errorf("the pod's %s: %w", f.name, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(src.Fd()), &st); err != nil {
			_ = src.Close()
			return fmt.Errorf("the pod's %s: %w", f.name, err)
		}
		if st.Dev == p.source[i].Dev && st.Ino == p.source[i].Ino {
			_ = src.Close()
			continue
		}
		data, err := io.ReadAll(io.LimitReader(src, 1<<20))
		_ = src.Close()
		if err != nil {
			return fmt.Errorf("the pod's %s: %w", f.name, err)
		}
		p.gen++
		cp := filepath.Join(p.dir, fmt.Sprintf("%s.%d", f.name, p.gen))
		if err := os.WriteFile(cp, data, 0o644); err != nil {
			return fmt.Errorf("copying the pod's %s: %w", f.name, err)
		}
		target, err := filepath.EvalSymlinks(f.target)
		if err != nil {
			return fmt.Errorf("bind-mounting the pod's file on %s: %w", f.target, err)
		}
		if p.source[i].Ino != 0 {
			if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
				return fmt.Errorf("unmounting the pod's old %s: %w", f.name, err)
			}
		}
		if err := bindReadOnly(cp, target); err != nil {
			return err
		}
		// The mount holds the copy; its name is not needed any more.
		_ = os.Remove(cp)
		p.source[i] = st
	}
	return nil
}

// bindReadOnly bind-mounts src read-only on resolved, the file a symlink
// such as systemd-resolved's /etc/resolv.conf leads to.
func bindReadOnly(src, resolved string) error {
	if err := unix.Mount(src, resolved, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting the pod's file on %s: %w", resolved, err)
	}
	// The remount must keep the flags the kernel locked on the source's
	// mount (nosuid, nodev, noexec of /tmp, say): in a user namespace
	// clearing them is EPERM.
	var st unix.Statfs_t
	if err := unix.Statfs(resolved, &st); err != nil {
		return fmt.Errorf("making %s read-only: %w", resolved, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 { //nolint:gosec // flag bits
			flags |= f.ms
		}
	}
	if err := unix.Mount("", resolved, "", flags, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", resolved, err)
	}
	return nil
}

// sandbox serves sessions. As its PID namespace's init it reaps every
// process that ends in it, so it starts sessions with os.StartProcess and
// hands each its own exit status.
type sandbox struct {
	log     *slog.Logger
	files   *podFiles
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
}

func (s *sandbox) serve(l *net.UnixListener) error {
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			return fmt.Errorf("session socket: %w", err)
		}
		go s.session(conn)
	}
}

// reap waits for every child as init must: the sessions' (handed to their
// waiters) and orphans' (dropped).
func (s *sandbox) reap() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGCHLD)
	for range sigs {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err != nil || pid <= 0 {
				break
			}
			s.mu.Lock()
			if ch, ok := s.waiters[pid]; ok {
				ch <- ws
				delete(s.waiters, pid)
			}
			s.mu.Unlock()
		}
	}
}

func (s *sandbox) session(conn *net.UnixConn) {
	defer conn.Close()
	req, files, err := readRequest(conn)
	if err != nil {
		s.log.Warn("session refused", "err", err)
		writeResponse(conn, Response{ExitCode: podexec.ExitCannotRun, Error: err.Error()})
		return
	}
	if err := s.files.refresh(); err != nil {
		// The files of the pod's last start stay; say so, run anyway.
		s.log.Warn("the pod's files were rewritten but cannot be mounted again", "err", err)
	}
	args := append([]string{"dnsplane", Subcommand, "session"}, podexec.IdentityArgs(podexec.Identity{UID: req.UID, GID: req.GID, Groups: req.Groups})...)
	if req.Dir != "" {
		args = append(args, podexec.ChdirFlag+req.Dir)
	}
	args = append(args, "--")
	args = append(args, req.Argv...)
	attr := &os.ProcAttr{Dir: "/", Env: req.Env, Sys: &syscall.SysProcAttr{Setpgid: true}}
	if req.TTY {
		attr.Files = []*os.File{files[0], files[0], files[0]}
		attr.Sys = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	} else {
		attr.Files = files
	}
	ch := make(chan syscall.WaitStatus, 1)
	s.mu.Lock()
	p, err := os.StartProcess("/proc/self/exe", args, attr)
	if err == nil {
		s.waiters[p.Pid] = ch
	}
	s.mu.Unlock()
	for _, f := range files {
		_ = f.Close() // the session has them
	}
	if err != nil {
		writeResponse(conn, Response{ExitCode: podexec.ExitCannotRun, Error: fmt.Sprintf("starting the session: %v", err)})
		return
	}
	pgid := p.Pid // its own group (Setpgid) or session (Setsid)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The agent closing its end (the client went away) ends the
		// session: its whole process group, background jobs included.
		var b [1]byte
		_, _ = conn.Read(b[:])
		if ctx.Err() == nil {
			_ = unix.Kill(-pgid, unix.SIGKILL)
		}
	}()
	ws := <-ch
	cancel()
	resp := Response{ExitCode: ws.ExitStatus()}
	if ws.Signaled() {
		resp.Signal = int(ws.Signal())
		resp.ExitCode = 128 + resp.Signal
	}
	writeResponse(conn, resp)
}

func writeResponse(conn *net.UnixConn, r Response) {
	data, err := json.Marshal(r)
	if err != nil {
		return
	}
	_, _ = conn.Write(data)
}
