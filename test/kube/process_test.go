package kube

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// stopTimeout bounds a graceful stop (SIGTERM) before the child is killed.
const stopTimeout = 20 * time.Second

// process is a child process the test owns: stopped at cleanup, killed
// with the test process (PR_SET_PDEATHSIG) when that dies first.
type process struct {
	name   string
	cmd    *exec.Cmd
	out    *testkit.Buffer
	exited chan struct{}
	err    error // cmd.Wait's result, set before exited is closed
}

// startProcess starts path with args and env (added to the test's) and
// registers its stop with t; its output is logged when t fails.
func startProcess(t testing.TB, name string, env []string, path string, args ...string) *process {
	t.Helper()
	p, err := spawn(name, env, path, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.running() {
			if err := p.stop(); err != nil {
				t.Logf("stopping %s: %v", name, err)
			}
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, p.out.Tail(8000))
		}
	})
	return p
}

func spawn(name string, env []string, path string, args ...string) (*process, error) {
	p := &process{name: name, cmd: exec.Command(path, args...), out: &testkit.Buffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = append(p.cmd.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits; after stopTimeout the child is killed.
func (p *process) stop() error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling %s: %w", p.name, err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not stop within %v of SIGTERM and was killed", p.name, stopTimeout)
	}
}
