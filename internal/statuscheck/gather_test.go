package statuscheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/upctl"
	"github.com/dnsplane/dnsplane/internal/upstate"
)

func state(dir string, pid int) upstate.State {
	return upstate.State{SchemaVersion: upstate.SchemaVersion, PID: pid, DataDir: dir, APIServer: "https://127.0.0.1:1",
		Kubeconfig: filepath.Join(dir, "kubeconfig"), ClusterDomain: "cluster.local", ClusterDNS: "127.0.0.1:1",
		Nodes: []upstate.Node{{Name: "node-1", NodeCache: "127.0.0.1:1"}}}
}

// exitedPID is the pid of a process that ran and was reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// zombiePID is the pid of a killed child not yet reaped, as a SIGKILLed
// `up` whose parent does not wait for it stays.
func zombiePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Wait() })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Until the kernel has made it a zombie, it still runs.
	stat := fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(stat)
		return err == nil && strings.Contains(string(b), ") Z"), nil
	})
	if err != nil {
		t.Fatalf("the killed child never became a zombie: %v", err)
	}
	return cmd.Process.Pid
}

// TestNotRunning: no up.json, or one whose `up` is gone, is a
// NotRunningError naming the data dir and how to start one.
func TestNotRunning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pid     func(t *testing.T) int // 0: no up.json
		wantErr string
	}{
		{name: "no up.json", wantErr: "no dnsplane up is running with data dir DIR (no up.json); start one with dnsplane up --data-dir DIR"},
		{name: "exited", pid: exitedPID, wantErr: "dnsplane up with data dir DIR is not running (stale up.json from pid PID: no such process: it crashed or was killed); start one with dnsplane up --data-dir DIR"},
		{name: "zombie", pid: zombiePID, wantErr: "(stale up.json from pid PID: the process exited (a zombie)"},
		{name: "pid reused, no socket", pid: func(*testing.T) int { return os.Getpid() }, wantErr: "(stale up.json from pid PID: pid runs, but no one serves DIR/up.sock)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pid := 0
			if tt.pid != nil {
				pid = tt.pid(t)
				if err := upstate.Write(dir, state(dir, pid)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Gather(ctxFor(t, 10*time.Second), dir, time.Second)
			var nr *NotRunningError
			if !errors.As(err, &nr) || nr.StalePID != pid {
				t.Fatalf("Gather: %v, want a NotRunningError with pid %d", err, pid)
			}
			want := strings.NewReplacer("DIR", dir, "PID", fmt.Sprint(pid)).Replace(tt.wantErr)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Gather: %v\nwant %q", err, want)
			}
		})
	}
}

// TestBadUpJSON: an up.json that does not parse is an error naming it,
// not "not running": status cannot know.
func TestBadUpJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(upstate.Path(dir), []byte(`{"pid":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Gather(ctxFor(t, 10*time.Second), dir, time.Second)
	if _, ok := errors.AsType[*NotRunningError](err); ok || err == nil || !strings.Contains(err.Error(), upstate.Path(dir)) {
		t.Errorf("Gather: %v, want an error naming %s", err, upstate.Path(dir))
	}
}

type node struct {
	name string
	on   bool
}

func (n node) Name() string                                        { return n.name }
func (n node) On() bool                                            { return n.on }
func (n node) Set(context.Context, bool) (changed bool, err error) { return false, nil }

// TestGather: a running `up` as status sees it through the control
// socket, an HTTPS API server with the admin kubeconfig and a DNS server.
// The API here serves only the health endpoints, so the operator and the
// agent of the running node are reported unhealthy, each saying why; the
// stopped node is Stopped without asking anything.
func TestGather(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	var paths []string
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer admin-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/readyz") {
			_, _ = w.Write([]byte("ok"))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(api.Close)
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: admin-token}}]
contexts: [{name: c, context: {cluster: c, user: admin}}]
current-context: c
`, api.URL)
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	dnsAddr := dnsServer(t)
	st := upstate.State{SchemaVersion: upstate.SchemaVersion, PID: os.Getpid(), DataDir: dir, APIServer: api.URL,
		Kubeconfig: filepath.Join(dir, "kubeconfig"), ClusterDomain: "cluster.local", ClusterDNS: dnsAddr,
		Nodes: []upstate.Node{{Name: "node-1", NodeCache: dnsAddr}, {Name: "node-2", NodeCache: "127.0.0.1:1"}}}
	if err := upstate.Write(dir, st); err != nil {
		t.Fatal(err)
	}
	srv := &upctl.Server{DataDir: dir, Nodes: []upctl.Node{node{"node-1", true}, node{"node-2", false}},
		Components: func() []upctl.ComponentStatus {
			return []upctl.ComponentStatus{{Name: "apiserver", Running: true}, {Name: "controllers", Running: true},
				{Name: "scheduler", Running: true}, {Name: "dns-operator", Running: true}}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("control socket: %v", err)
		}
	})

	start := time.Now()
	r, err := Gather(ctxFor(t, 10*time.Second), dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Gather took %s", took)
	}
	want := []struct{ name, status, message string }{
		{"apiserver", Healthy, "ok"},
		{"etcd", Healthy, "ok"},
		{"controllers", Healthy, "running"},
		{"scheduler", Healthy, "running"},
		{"dns-operator", Unhealthy, "running, but reading the DNS resource: "},
		{"cluster-dns", Healthy, dnsAddr + " answers cluster.local. SOA in "},
		{"nodecache/node-1", Healthy, dnsAddr + " answers"},
		{"agent/node-1", Unhealthy, "node node-1: "},
		{"nodecache/node-2", Stopped, "stopped with dnsplane node stop; start it with: dnsplane node start node-2 --data-dir " + dir},
		{"agent/node-2", Stopped, "stopped with dnsplane node stop"},
	}
	if len(r.Components) != len(want) {
		t.Fatalf("components %+v", r.Components)
	}
	for i, w := range want {
		if c := r.Components[i]; c.Name != w.name || c.Status != w.status || !strings.HasPrefix(c.Message, w.message) {
			t.Errorf("line %d: %+v, want %s %s %q…", i, c, w.name, w.status, w.message)
		}
	}
	if r.Healthy || len(r.Unhealthy()) != 4 || r.Up.PID != os.Getpid() {
		t.Errorf("healthy %v, unhealthy %+v, pid %d", r.Healthy, r.Unhealthy(), r.Up.PID)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(paths, " "), "/readyz/etcd") {
		t.Errorf("paths asked: %v", paths)
	}
}

// TestGatherHungUp: an `up` that accepts on its control socket but never
// answers (SIGSTOP, a deadlock) is reported component by component within
// about 1.5 timeouts, not waited for.
func TestGatherHungUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Listening without accepting: the kernel completes the connection,
	// no one reads the request.
	ln, err := net.Listen("unix", upctl.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	// A UDP socket no one reads: the DNS queries get no answer either.
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	st := state(dir, os.Getpid())
	st.ClusterDNS = silent.LocalAddr().String()
	if err := os.WriteFile(st.Kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"contexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := upstate.Write(dir, st); err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second
	start := time.Now()
	r, err := Gather(ctxFor(t, 10*time.Second), dir, timeout)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*timeout {
		t.Errorf("Gather took %s with a %s timeout", took, timeout)
	}
	byName := map[string]Result{}
	for _, c := range r.Components {
		byName[c.Name] = c
	}
	wantSocket := "unknown: the control socket " + upctl.SocketPath(dir) + " did not answer within 500ms (is pid " + fmt.Sprint(os.Getpid()) + " stopped or stuck?)"
	if c := byName["scheduler"]; c.Status != Unhealthy || c.Message != wantSocket {
		t.Errorf("scheduler: %+v, want %q", c, wantSocket)
	}
	if c := byName["cluster-dns"]; c.Status != Unhealthy || !strings.HasPrefix(c.Message, "no answer within 1s: ") {
		t.Errorf("cluster-dns: %+v", c)
	}
	if r.Healthy {
		t.Error("healthy")
	}
}
