package podsandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// TestMain lets the test binary stand in for dnsplane's __podsandbox.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Subcommand {
		code, err := Main(os.Args[2:])
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

type sandboxFixture struct {
	m     *Manager
	state string
	pod   Pod
}

func startFixture(t *testing.T, start bool) *sandboxFixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (user namespaces with a host ID range)")
	}
	state := t.TempDir()
	dir := podfiles.Dir(state, "ns1", "web", "uid-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writePodFile(t, dir, podfiles.ResolvConf, "nameserver 10.96.0.10\n")
	writePodFile(t, dir, podfiles.Hosts, "127.0.0.1\tlocalhost\n")
	alloc, err := NewAllocator(t.TempDir(), DefaultFirstBase, DefaultRanges)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Config{StateDir: state, Allocator: alloc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	f := &sandboxFixture{m: m, state: state, pod: Pod{Namespace: "ns1", Name: "web", UID: "uid-1", Hostname: "web-host", Dir: dir}}
	if start {
		if err := m.Ensure(t.Context(), f.pod); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// writePodFile writes as the agent does: a new file renamed over the old.
func writePodFile(t *testing.T, dir, name, data string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// run runs a shell script as uid in the sandbox and returns its output.
func (f *sandboxFixture) run(t *testing.T, uid uint32, script string) (string, Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := DialSession(ctx, f.state, f.pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = Start(conn, Request{Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, UID: uid, GID: uid}, []*os.File{stdin, w, w})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	resp, err := Wait(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), resp
}

func TestSandboxSession(t *testing.T) {
	t.Parallel()
	f := startFixture(t, true)
	out, resp := f.run(t, 0, "hostname; id -u; cat /proc/self/uid_map; cat /etc/resolv.conf; tr '\\0' ' ' < /proc/1/cmdline; echo; ls "+f.state+"; exit 3")
	lines := strings.Split(out, "\n")
	if resp.ExitCode != 3 || len(lines) < 5 {
		t.Fatalf("exit %d (%s), output %q", resp.ExitCode, resp.Error, out)
	}
	if lines[0] != "web-host" || lines[1] != "0" {
		t.Errorf("hostname and uid %q, want web-host and 0", lines[:2])
	}
	if m := strings.Fields(lines[2]); len(m) != 3 || m[0] != "0" || m[1] == "0" || m[2] != "65536" {
		t.Errorf("uid_map %q: want container 0..65535 on a host range above 0", lines[2])
	}
	if lines[3] != "nameserver 10.96.0.10" {
		t.Errorf("resolv.conf %q", lines[3])
	}
	if !strings.Contains(lines[4], Subcommand+" sandbox") {
		t.Errorf("PID 1 is %q, want the sandbox", lines[4])
	}
	if listed := lines[5:]; slices.Contains(listed, "sandboxes") || slices.Contains(listed, "pods") {
		t.Errorf("the state dir is visible in the sandbox: %q", out)
	}

	// The pod's root cannot end the pod's sandbox.
	f.run(t, 0, "for s in HUP INT TERM QUIT USR1 USR2 PIPE KILL; do kill -$s 1; done; sleep 0.2")
	if out, _ := f.run(t, 0, "tr '\\0' ' ' < /proc/1/cmdline"); !strings.Contains(out, Subcommand+" sandbox") || !f.m.Running(f.pod.UID) {
		t.Errorf("after signals to PID 1: %q, running %t", out, f.m.Running(f.pod.UID))
	}

	// A rewrite of the pod's files reaches the next session.
	writePodFile(t, f.pod.Dir, podfiles.ResolvConf, "nameserver 10.96.0.11\n")
	if out, _ := f.run(t, 65534, "cat /etc/resolv.conf; echo x > /etc/resolv.conf"); !strings.HasPrefix(out, "nameserver 10.96.0.11\n") || !strings.Contains(out, "Read-only") {
		t.Errorf("after a rewrite: %q, want the new file, read-only", out)
	}
}

func TestSandboxClientGoneKillsSession(t *testing.T) {
	t.Parallel()
	f := startFixture(t, true)
	arg := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e6)
	ctx, cancel := context.WithCancel(t.Context())
	conn, err := Dial(ctx, f.state, f.pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	// A background job of the session's too.
	if err := Start(conn, Request{Argv: []string{"sh", "-c", "sleep " + arg + " & sleep " + arg}, Env: []string{"PATH=/usr/bin:/bin"}, UID: 1, GID: 1},
		[]*os.File{null, null, null}); err != nil {
		t.Fatal(err)
	}
	poll := func(want int) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
			return len(sleeps(arg)) == want, nil
		})
		if err != nil {
			t.Fatalf("%d sleeps, want %d", len(sleeps(arg)), want)
		}
	}
	poll(2)
	cancel()
	conn.Close()
	poll(0)
}

func TestSandboxStartedOnRequest(t *testing.T) {
	t.Parallel()
	f := startFixture(t, false)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- ServeEnsure(ctx, f.state, ensurer{f}, nil) }()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(filepath.Join(SocketsDir(f.state), agentSocket))
		return err == nil, nil
	})
	if err != nil {
		t.Fatal("the agent's socket never appeared")
	}
	if out, resp := f.run(t, 0, "hostname"); out != "web-host\n" || resp.ExitCode != 0 {
		t.Errorf("session of a sandbox started on request: %q, %+v", out, resp)
	}
	if !f.m.Running(f.pod.UID) {
		t.Error("not running after a session")
	}
	f.m.Stop(f.pod.UID)
	if f.m.Running(f.pod.UID) {
		t.Error("running after Stop")
	}
	if _, err := os.Stat(SocketPath(f.state, f.pod.UID)); !os.IsNotExist(err) {
		t.Errorf("socket left after Stop: %v", err)
	}
	if _, err := DialSession(ctx, f.state, "no-such-uid"); err == nil || !strings.Contains(err.Error(), "unknown pod") {
		t.Errorf("an unknown pod: err %v", err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeEnsure: %v", err)
	}
}

type ensurer struct{ f *sandboxFixture }

func (e ensurer) EnsureSandbox(ctx context.Context, uid types.UID) error {
	if uid != e.f.pod.UID {
		return fmt.Errorf("unknown pod %s", uid)
	}
	return e.f.m.Ensure(ctx, e.f.pod)
}

// sleeps are the pids of `sleep arg`.
func sleeps(arg string) []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && slices.Equal(strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00"), []string{"sleep", arg}) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
