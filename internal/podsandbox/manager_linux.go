package podsandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// Config configures a Manager.
type Config struct {
	// StateDir is the agent's state dir: the sandboxes' sockets are under
	// it, and it is hidden in every sandbox.
	StateDir string
	// Hide are more directories covered by an empty read-only tmpfs in
	// every sandbox: the data dir of `dnsplane up`.
	Hide []string
	// Allocator hands out the pods' ID ranges; nil = the default ranges,
	// locked in DefaultLockDir.
	Allocator *Allocator
	// MountDir is an empty directory every sandbox mounts a tmpfs of its
	// own on, for its copies of the pod's files: it must be reachable by
	// any user (the sandbox's root is an unprivileged host ID). Default
	// DefaultMountDir.
	MountDir string
	// Command is the argv prefix that starts dnsplane; nil = /proc/self/exe.
	Command []string
	// Logger; nil = slog.Default().
	Logger *slog.Logger
}

// Pod is what a sandbox is made for.
type Pod struct {
	Namespace, Name string
	UID             types.UID
	// Hostname is the pod's: spec.hostname, else its name, truncated to
	// 63 bytes as kubelet does.
	Hostname string
	// Dir holds the pod's resolv.conf and hosts (podfiles.Dir).
	Dir string
	// HostUTS keeps the host's UTS namespace, and so its hostname: a
	// hostNetwork pod's, as the CRI gives such a pod NamespaceMode NODE.
	HostUTS bool
}

// Manager starts and stops the sandboxes of one agent's pods.
type Manager struct {
	cfg   Config
	log   *slog.Logger
	spawn chan func()
	done  chan struct{}

	mu    sync.Mutex
	boxes map[types.UID]*box
}

type box struct {
	pod    Pod
	base   uint32
	cmd    *exec.Cmd
	exited chan struct{}
}

// NewManager returns a manager; Close stops it and its sandboxes.
func NewManager(c Config) (*Manager, error) {
	if c.StateDir == "" {
		return nil, errors.New("pod sandboxes: no state dir")
	}
	if c.Allocator == nil {
		a, err := NewAllocator(DefaultLockDir, DefaultFirstBase, DefaultRanges)
		if err != nil {
			return nil, err
		}
		c.Allocator = a
	}
	if c.MountDir == "" {
		c.MountDir = DefaultMountDir
	}
	if err := ensureMountDir(c.MountDir); err != nil {
		return nil, fmt.Errorf("pod sandboxes: %w", err)
	}
	if len(c.Command) == 0 {
		c.Command = []string{"/proc/self/exe"}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	m := &Manager{cfg: c, log: c.Logger, spawn: make(chan func()), done: make(chan struct{}), boxes: map[types.UID]*box{}}
	go m.spawner()
	return m, nil
}

// spawner starts every sandbox from one OS thread that lives as long as
// the manager: the kernel sends a child's parent-death signal when the
// thread that forked it exits, not the process (prctl(2)
// PR_SET_PDEATHSIG), and Go may retire other threads.
//
// On Close, every sandbox is killed first; the thread is then unlocked and
// given back, not ended: a goroutine that exits locked ends its thread,
// and that thread may have forked other children before it was locked
// here (the embedded etcd's member, whose parent-death signal then killed
// it in the middle of `up`'s ordered stop).
func (m *Manager) spawner() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		select {
		case f := <-m.spawn:
			f()
		case <-m.done:
			return
		}
	}
}

// Ensure starts the pod's sandbox unless it runs.
func (m *Manager) Ensure(ctx context.Context, p Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.boxes[p.UID]; ok {
		select {
		case <-b.exited:
			delete(m.boxes, p.UID)
		default:
			return nil
		}
	}
	var (
		b   *box
		err error
	)
	ran := make(chan struct{})
	select {
	case m.spawn <- func() { b, err = m.start(p); close(ran) }:
	case <-m.done:
		return errors.New("pod sandboxes: stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
	<-ran
	if err != nil {
		return fmt.Errorf("starting the pod's sandbox: %w", err)
	}
	m.boxes[p.UID] = b
	m.log.Info("pod sandbox started", "pod", p.Namespace+"/"+p.Name, "pid", b.cmd.Process.Pid, "hostname", p.Hostname,
		"host-ids", fmt.Sprintf("%d-%d", b.base, b.base+RangeSize-1))
	return nil
}

// Running reports whether pod uid has a sandbox that has not exited.
func (m *Manager) Running(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.boxes[uid]
	if !ok {
		return false
	}
	select {
	case <-b.exited:
		return false
	default:
		return true
	}
}

// Stop kills the sandbox of pod uid, and so every session in it (they die
// with their PID namespace's init), and removes its socket.
func (m *Manager) Stop(uid types.UID) {
	m.mu.Lock()
	b, ok := m.boxes[uid]
	delete(m.boxes, uid)
	m.mu.Unlock()
	if ok {
		m.kill(b)
	}
}

func (m *Manager) kill(b *box) {
	_ = b.cmd.Process.Kill()
	<-b.exited
	_ = os.Remove(SocketPath(m.cfg.StateDir, b.pod.UID))
	m.log.Info("pod sandbox stopped", "pod", b.pod.Namespace+"/"+b.pod.Name)
}

// Close stops every sandbox and the manager.
func (m *Manager) Close() {
	m.mu.Lock()
	boxes := m.boxes
	m.boxes = map[types.UID]*box{}
	m.mu.Unlock()
	for _, b := range boxes {
		m.kill(b)
	}
	select {
	case <-m.done:
	default:
		close(m.done)
	}
}

// start starts the sandbox process of p.
func (m *Manager) start(p Pod) (*box, error) {
	lease, err := m.cfg.Allocator.Allocate()
	if err != nil {
		return nil, err
	}
	// The sandbox inherits the lock; the agent's copy goes either way.
	defer func() { _ = lease.Release() }()
	ln, err := listen(m.cfg.StateDir, p.UID)
	if err != nil {
		return nil, fmt.Errorf("session socket: %w", err)
	}
	lnFile, err := ln.File()
	_ = ln.Close()
	if err != nil {
		return nil, fmt.Errorf("session socket: %w", err)
	}
	defer lnFile.Close()
	for _, name := range []string{podfiles.ResolvConf, podfiles.Hosts} {
		if _, err := os.Stat(filepath.Join(p.Dir, name)); err != nil {
			return nil, fmt.Errorf("the pod's files: %w", err)
		}
	}
	// The directory, not the files: the agent rewrites them by rename,
	// and the sandbox mounts the new ones for later sessions.
	dir, err := os.OpenFile(p.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the pod's files: %w", err)
	}
	defer dir.Close()
	hostname := p.Hostname
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWNS)
	if p.HostUTS {
		hostname, flags = "", flags&^syscall.CLONE_NEWUTS
	}
	sp, err := json.Marshal(spec{Hostname: hostname, MountDir: m.cfg.MountDir, Hide: append([]string{m.cfg.StateDir}, m.cfg.Hide...)})
	if err != nil {
		return nil, err
	}
	args := append(append([]string{}, m.cfg.Command[1:]...), Subcommand, "sandbox", string(sp))
	cmd := exec.Command(m.cfg.Command[0], args...)
	cmd.Dir = "/"
	// Sessions get their environment from each request; the sandbox
	// itself needs none but a small Go runtime.
	cmd.Env = []string{"GOMAXPROCS=1", "GOGC=50"}
	cmd.ExtraFiles = []*os.File{lnFile, lease.File(), dir}
	cmd.Stderr = &lineLogger{log: m.log.With("pod", p.Namespace+"/"+p.Name, "component", "sandbox")}
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(lease.Base), Size: RangeSize}}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: ids, GidMappings: ids,
		// Supplementary groups of the pod are container IDs set in the
		// namespace, which needs setgroups allowed there.
		GidMappingsEnableSetgroups: true,
		// Root of the namespace, that is the range's first host ID: the
		// agent's own host uid 0 must not carry over.
		Credential: &syscall.Credential{Uid: 0, Gid: 0},
		// Its own session, so no terminal of the agent's is its sessions'.
		Setsid:    true,
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		_ = os.Remove(SocketPath(m.cfg.StateDir, p.UID))
		return nil, err
	}
	b := &box{pod: p, base: lease.Base, cmd: cmd, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		close(b.exited)
		m.log.Debug("pod sandbox exited", "pod", p.Namespace+"/"+p.Name, "err", err)
	}()
	return b, nil
}

// DefaultMountDir is the sandboxes' mount point for their copies of the
// pod's files.
const DefaultMountDir = "/run/dnsplane/sandbox"

// ensureMountDir makes dir an empty directory every user can reach: its
// parents are made searchable (not listable) where they are not.
func ensureMountDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o111); err != nil {
				return err
			}
		}
	}
	return nil
}

// lineLogger logs what the sandbox writes to its stderr, a line a record.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.log.Warn(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 {
		l.log.Warn(string(l.buf))
		l.buf = nil
	}
	return len(p), nil
}
