package etcdproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// Config says how to run and supervise the etcd member.
type Config struct {
	// Command is the child's command line; "--data-dir", DataDir and the
	// TLS flags (MemberTLSArgs) are appended.
	// For dnsplane it is the running binary with the etcd-member command.
	Command []string
	// DataDir is etcd's data dir.
	DataDir string
	// TLS are the member's certificates, passed to it as etcd's flags
	// (--trusted-ca-file, --cert-file, ...); the member requires a client
	// certificate from that CA on its client and peer URLs.
	TLS storage.EmbeddedTLS
	// Logger receives the child's log and the supervisor's own.
	Logger *slog.Logger
	// ReadyTimeout bounds each start until the member serves (default 60s):
	// a single-member etcd that cannot elect itself never becomes ready.
	ReadyTimeout time.Duration
	// StopTimeout bounds a graceful stop before the child is killed
	// (default 10s).
	StopTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between restarts (defaults
	// 1s and 10s: an etcd start costs about a second); it doubles after each failed start.
	MinBackoff, MaxBackoff time.Duration
	// OnRestart is called with the new endpoints each time a restarted
	// member is ready (the client must move to them: the ports change).
	OnRestart func(endpoints []string)
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = 60 * time.Second
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 10 * time.Second
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(10*time.Second, c.MinBackoff)
	}
	return c
}

// Supervisor runs the etcd member and restarts it when it dies.
type Supervisor struct {
	cfg Config
	log *slog.Logger

	stop     context.CancelFunc
	stopping context.Context
	done     chan struct{}

	mu        sync.Mutex
	child     *child
	endpoints []string
	restarts  int
}

// Start starts the member and returns once it serves. A member that fails
// to start is not retried here: at start-up the error (a damaged data dir,
// a timeout) is for the user. Cancelling ctx stops the start within
// StopTimeout. After Start returns, the member is restarted whenever it
// dies, until Close.
func Start(ctx context.Context, cfg Config) (*Supervisor, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Command) == 0 {
		return nil, errors.New("etcd member: no command")
	}
	stopping, stop := context.WithCancel(context.Background())
	s := &Supervisor{cfg: cfg, log: cfg.Logger, stop: stop, stopping: stopping, done: make(chan struct{})}
	c, err := s.startChild(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	s.child, s.endpoints = c, c.endpoints
	go s.supervise(c)
	return s, nil
}

// Endpoints are the member's client URLs now.
func (s *Supervisor) Endpoints() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.endpoints)
}

// Restarts is how many times the member was restarted after it died.
func (s *Supervisor) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// Close stops the member gracefully (killing it after StopTimeout) and
// ends supervision.
func (s *Supervisor) Close() error {
	s.stop()
	<-s.done
	return nil
}

// supervise waits for the member to die and restarts it, with backoff,
// until Close.
func (s *Supervisor) supervise(c *child) {
	defer close(s.done)
	for {
		select {
		case <-s.stopping.Done():
			c.terminate(s.cfg.StopTimeout)
			return
		case <-c.exited:
		}
		if s.stopping.Err() != nil {
			// Stopping raced with the exit: nothing to report or restart.
			return
		}
		s.log.Error("embedded etcd exited; the API answers 5xx until it is back, DNS keeps answering from its caches",
			"dataDir", s.cfg.DataDir, "status", c.status(), "reason", c.reason())
		backoff := s.cfg.MinBackoff
		for {
			select {
			case <-s.stopping.Done():
				return
			case <-time.After(backoff):
			}
			next, err := s.startChild(s.stopping)
			if err == nil {
				c = next
				s.mu.Lock()
				s.child, s.endpoints = c, c.endpoints
				s.restarts++
				s.mu.Unlock()
				s.log.Info("embedded etcd restarted", "endpoints", c.endpoints)
				if s.cfg.OnRestart != nil {
					s.cfg.OnRestart(slices.Clone(c.endpoints))
				}
				break
			}
			if s.stopping.Err() != nil {
				return
			}
			backoff = min(2*backoff, s.cfg.MaxBackoff)
			s.log.Error("restarting embedded etcd failed; retrying", "err", err, "in", backoff)
		}
	}
}

// child is one run of the member process.
type child struct {
	cmd       *exec.Cmd
	stdin     io.Closer
	endpoints []string
	exited    chan struct{}

	mu      sync.Mutex
	phase   string
	errMsg  string
	damaged *damaged
	tail    []string // last lines of stderr that were not JSON logs (panics)
	lastErr string   // the last error the child logged
	waitErr error
}

// startChild starts the member and waits until it is ready, fails, dies,
// times out or ctx ends.
func (s *Supervisor) startChild(ctx context.Context) (*child, error) {
	args := append(slices.Clone(s.cfg.Command[1:]), "--data-dir", s.cfg.DataDir)
	args = append(args, MemberTLSArgs(s.cfg.TLS)...)
	cmd := exec.Command(s.cfg.Command[0], args...)
	setParentDeathSignal(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("etcd member: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("etcd member: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("etcd member: %w", err)
	}
	c := &child{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	if err := startOnOwnThread(cmd, c.exited); err != nil {
		return nil, fmt.Errorf("starting the embedded etcd process %s: %w", s.cfg.Command[0], err)
	}
	ready := make(chan []string, 1)
	var pipes sync.WaitGroup
	pipes.Go(func() { c.readMessages(stdout, ready) })
	pipes.Go(func() { c.readLog(stderr, s.log) })
	go func() {
		// Wait closes the pipes only after the process exits: read them to
		// the end first so that the last lines (the panic) are kept.
		pipes.Wait()
		err := cmd.Wait()
		c.mu.Lock()
		c.waitErr = err
		c.mu.Unlock()
		close(c.exited)
	}()

	timer := time.NewTimer(s.cfg.ReadyTimeout)
	defer timer.Stop()
	select {
	case eps := <-ready:
		c.endpoints = eps
		return c, nil
	case <-c.exited:
		return nil, s.startError(c)
	case <-timer.C:
		c.terminate(s.cfg.StopTimeout)
		return nil, fmt.Errorf("embedded etcd in %s did not become ready within %s (last phase: %s); "+
			"a single-member etcd that cannot elect itself leader usually has a damaged write-ahead log "+
			"(member/wal): restore the data dir from a backup (see docs/operations.md)",
			s.cfg.DataDir, s.cfg.ReadyTimeout, c.lastPhase())
	case <-ctx.Done():
		c.terminate(s.cfg.StopTimeout)
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", s.cfg.DataDir, ctx.Err())
	}
}

// startError says why a member died before it was ready.
func (s *Supervisor) startError(c *child) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.damaged != nil {
		return &storage.DamagedError{Dir: s.cfg.DataDir, Part: c.damaged.Part, Detail: c.damaged.Detail}
	}
	if c.errMsg != "" {
		// RunMember's own error (lock held, etcd's error) names the data dir.
		return errors.New(c.errMsg)
	}
	detail := firstCrashLine(c.tail)
	if c.phase == storage.PhaseCheckingPages || c.phase == storage.PhaseStarting && strings.Contains(detail, "database") {
		// bbolt and etcd's backend panic on damaged pages.
		return &storage.DamagedError{Dir: s.cfg.DataDir, Part: "database member/snap/db", Detail: detail}
	}
	if detail == noOutput && c.lastErr != "" {
		detail = c.lastErr
	}
	phase := c.phase
	if phase == "" {
		phase = "starting"
	}
	return fmt.Errorf("embedded etcd in %s exited (%v) while %s: %s; if the data dir is damaged, "+
		"restore it from a backup (see docs/operations.md)", s.cfg.DataDir, c.waitErr, phase, detail)
}

// readMessages reads the child's protocol lines until EOF.
func (c *child) readMessages(r io.Reader, ready chan<- []string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		c.mu.Lock()
		if m.Phase != "" {
			c.phase = m.Phase
		}
		if m.Error != "" {
			c.errMsg, c.damaged = m.Error, m.Damaged
		}
		c.mu.Unlock()
		if len(m.Endpoints) > 0 {
			select {
			case ready <- m.Endpoints:
			default:
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// tailLines is how much of the child's non-log output is kept for errors.
const tailLines = 40

// readLog re-logs the child's JSON log lines through the parent's logger
// and keeps the other lines (a Go panic and its stack) for error messages.
func (c *child) readLog(r io.Reader, log *slog.Logger) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if level, msg, ok := relog(log, line); ok {
			if level >= slog.LevelError {
				c.mu.Lock()
				c.lastErr = msg
				c.mu.Unlock()
			}
			continue
		}
		c.mu.Lock()
		c.tail = append(c.tail, line)
		if len(c.tail) > tailLines {
			c.tail = c.tail[len(c.tail)-tailLines:]
		}
		c.mu.Unlock()
		if isCrashLine(line) {
			log.Error(line, "component", "etcd")
		} else {
			log.Debug(line, "component", "etcd")
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// relog logs one slog JSON line again through log and returns its level
// and message (with its error, if any); false if it is not one.
func relog(log *slog.Logger, line string) (slog.Level, string, bool) {
	var rec map[string]any
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &rec) != nil {
		return 0, "", false
	}
	msg, _ := rec[slog.MessageKey].(string)
	var level slog.Level
	if l, ok := rec[slog.LevelKey].(string); !ok || level.UnmarshalText([]byte(l)) != nil {
		level = slog.LevelInfo
	}
	attrs := make([]any, 0, 2*len(rec))
	for k, v := range rec {
		switch k {
		case slog.TimeKey, slog.LevelKey, slog.MessageKey:
			continue
		}
		attrs = append(attrs, k, v)
	}
	log.Log(context.Background(), level, msg, attrs...)
	if e, ok := rec["error"].(string); ok {
		msg += ": " + e
	}
	return level, msg, true
}

const noOutput = "it printed no error (killed by a signal?)"

func isCrashLine(line string) bool {
	return strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:")
}

// firstCrashLine is the line of a crash that says what went wrong.
func firstCrashLine(tail []string) string {
	for _, l := range tail {
		if isCrashLine(l) {
			return l
		}
	}
	if len(tail) > 0 {
		return tail[len(tail)-1]
	}
	return noOutput
}

func (c *child) lastPhase() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == "" {
		return "not started"
	}
	return c.phase
}

func (c *child) status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waitErr == nil {
		return "exit status 0"
	}
	return c.waitErr.Error()
}

// reason is the child's own error or the crash line it printed.
func (c *child) reason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.errMsg != "" {
		return c.errMsg
	}
	if c.lastErr != "" && firstCrashLine(c.tail) == noOutput {
		return c.lastErr
	}
	return firstCrashLine(c.tail)
}

// terminate asks the child to stop by closing its stdin (the member ignores
// signals, see RunMember), and kills it if it has not exited within grace.
func (c *child) terminate(grace time.Duration) {
	_ = c.stdin.Close()
	select {
	case <-c.exited:
		return
	case <-time.After(grace):
	}
	_ = c.cmd.Process.Signal(os.Kill)
	<-c.exited
}

// Flags of the member's certificates, named as etcd's own.
const (
	FlagTrustedCAFile = "trusted-ca-file"
	FlagCertFile      = "cert-file"
	FlagKeyFile       = "key-file"
	FlagPeerCertFile  = "peer-cert-file"
	FlagPeerKeyFile   = "peer-key-file"
)

// MemberTLSArgs are the member's command line flags for t.
func MemberTLSArgs(t storage.EmbeddedTLS) []string {
	return []string{"--" + FlagTrustedCAFile, t.TrustedCAFile, "--" + FlagCertFile, t.CertFile, "--" + FlagKeyFile, t.KeyFile,
		"--" + FlagPeerCertFile, t.PeerCertFile, "--" + FlagPeerKeyFile, t.PeerKeyFile}
}

// startOnOwnThread starts cmd from an OS thread that no other goroutine
// uses until the process has exited. The kernel sends the member its
// parent-death signal (setParentDeathSignal) when the *thread* that forked
// it ends, and Go ends a thread whenever a goroutine exits while locked to
// it (a library's, or a pod sandbox spawner's): started from an ordinary
// thread, the member was killed in the middle of `up`'s ordered stop.
func startOnOwnThread(cmd *exec.Cmd, exited <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Given back, not ended, once the member is gone.
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		errc <- err
		if err == nil {
			<-exited
		}
	}()
	return <-errc
}
