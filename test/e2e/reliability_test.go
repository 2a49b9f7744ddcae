package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// The reliability suite: each test reproduces one way the hardening issue
// took dnsplane down, with bounded loops on 127.0.0.1, and checks that the
// process keeps serving.

// upServer is a running `dnsplane up`.
type upServer struct {
	*process
	DataDir, URL, Kubeconfig string
	ClusterDNS, NodeCache    string // ADDR:PORT
}

var upRE = regexp.MustCompile(`(?m)^dnsplane is up\n  API server:  (\S+)\n  kubeconfig:  (\S+)\n`)

// startUp runs `dnsplane up` over dataDir with its DNS on free loopback
// ports, through wrapper (a command line the binary is appended to, e.g.
// prlimit; nil for none), and waits for its banner.
func startUp(t *testing.T, dataDir string, wrapper []string, extra ...string) *upServer {
	t.Helper()
	// extra may choose the DNS addresses (the agent tests need port 53).
	dnsAddr := flagValue(extra, "--dns-listen")
	if dnsAddr == "" {
		dnsAddr = testkit.FreeUDPTCPAddr(t)
	}
	nodeAddr := flagValue(extra, "--nodecache-listen")
	if nodeAddr == "" {
		nodeAddr = testkit.FreeUDPTCPAddr(t)
	}
	args := []string{"up", "--data-dir", dataDir, "--secure-port", "0",
		"--dns-listen", dnsAddr, "--nodecache-listen", nodeAddr}
	if !slices.Contains(extra, "--verbose=false") {
		// The tests read start-up's info lines; a user sees them with -v.
		args = append(args, "-v")
	}
	if !slices.Contains(extra, "--upstream") {
		// Nothing outside the cluster is asked unless extra names an upstream.
		args = append(args, "--upstream", "127.0.0.1:9")
	}
	args = append(args, extra...)
	argv := append(append(append([]string(nil), wrapper...), dnsplaneBin), args...)
	p, err := startProcess("dnsplane "+strings.Join(args, " "), argv[0], argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("log of %s:\n%s", p.name, p.stderr.tail())
		}
	})
	out, err := p.stdout.waitFor(serverStartTimeout, p.exited, upRE.MatchString)
	if err != nil {
		t.Fatalf("%s: waiting for it to serve: %v (exit: %v)\nstdout:\n%s\nstderr:\n%s", p.name, err, p.err, out, p.stderr.tail())
	}
	m := upRE.FindStringSubmatch(out)
	return &upServer{process: p, DataDir: dataDir, URL: m[1], Kubeconfig: m[2], ClusterDNS: dnsAddr, NodeCache: nodeAddr}
}

// flagValue is the value of the last "--name value" pair in args, or "".
func flagValue(args []string, name string) string {
	v := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			v = args[i+1]
		}
	}
	return v
}

// requireDNS checks that both DNS servers of u answer a cluster name.
func (u *upServer) requireDNS(t *testing.T, when string) {
	t.Helper()
	for _, addr := range []string{u.ClusterDNS, u.NodeCache} {
		ip, err := lookupA(addr, "kubernetes.default.svc.cluster.local.")
		if err != nil || ip != "10.96.0.1" {
			t.Fatalf("%s: kubernetes.default at %s: %q, %v", when, addr, ip, err)
		}
	}
}

// populatedDataDir runs `dnsplane apiserver` once over a new data dir,
// creates a few ConfigMaps, and stops it cleanly.
func populatedDataDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	s := startServer(t, dir)
	cs := clientFor(t, s.Kubeconfig)
	for i := range 10 {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctxFor(t, 30*time.Second), configMap(fmt.Sprintf("c%d", i), i), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.stopOK(t)
	return dir
}

// TestDamagedDataDirFailsStartup: etcd on a damaged single-member data dir
// used to wait for a quorum forever (SIGTERM ignored) or print a Go panic.
// Start-up must end quickly with an error naming the data dir, what is
// damaged and what to do.
func TestDamagedDataDirFailsStartup(t *testing.T) {
	base := populatedDataDir(t)
	newestWAL := func(t *testing.T, dir string) string {
		t.Helper()
		names, err := filepath.Glob(filepath.Join(dir, "etcd", "member", "wal", "*.wal"))
		if err != nil || len(names) == 0 {
			t.Fatalf("no WAL segment: %v", err)
		}
		return names[len(names)-1]
	}
	overwrite := func(t *testing.T, path string, off int64) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", 4096)), off); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		part   string
	}{
		{"wal dir deleted", func(t *testing.T, dir string) {
			t.Helper()
			if err := os.RemoveAll(filepath.Join(dir, "etcd", "member", "wal")); err != nil {
				t.Fatal(err)
			}
		}, "write-ahead log member/wal"},
		{"newest wal segment emptied", func(t *testing.T, dir string) {
			t.Helper()
			if err := os.Truncate(newestWAL(t, dir), 0); err != nil {
				t.Fatal(err)
			}
		}, "write-ahead log member/wal"},
		{"newest wal segment truncated", func(t *testing.T, dir string) {
			t.Helper()
			if err := os.Truncate(newestWAL(t, dir), 100); err != nil {
				t.Fatal(err)
			}
		}, "write-ahead log member/wal"},
		{"database header overwritten", func(t *testing.T, dir string) {
			t.Helper()
			overwrite(t, filepath.Join(dir, "etcd", "member", "snap", "db"), 0)
		}, "database member/snap/db"},
		{"database pages overwritten", func(t *testing.T, dir string) {
			t.Helper()
			overwrite(t, filepath.Join(dir, "etcd", "member", "snap", "db"), 8192)
		}, "database member/snap/db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if out, err := exec.Command("cp", "-a", base, dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			tt.damage(t, dir)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, dnsplaneBin, "apiserver", "--data-dir", dir, "--secure-port", "0")
			dieWithParent(cmd)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("start-up did not end within 30s:\n%s", out)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1\n%s", err, out)
			}
			last := lastLine(string(out))
			for _, want := range []string{"error: etcd data dir " + filepath.Join(dir, "etcd") + " is damaged", tt.part, "restore it from a backup"} {
				if !strings.Contains(last, want) {
					t.Errorf("last line %q does not say %q", last, want)
				}
			}
			if strings.Contains(string(out), "goroutine ") {
				t.Errorf("a Go stack reached the user:\n%s", out)
			}

			// The recovery docs/operations.md gives: put a backup of etcd/
			// (here the intact copy) back and start.
			if err := os.Rename(filepath.Join(dir, "etcd"), filepath.Join(dir, "etcd.damaged")); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-a", filepath.Join(base, "etcd"), filepath.Join(dir, "etcd")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			s := startServer(t, dir)
			list, err := clientFor(t, s.Kubeconfig).CoreV1().ConfigMaps("default").List(ctxFor(t, 30*time.Second), metav1.ListOptions{LabelSelector: "stream=crash"})
			if err != nil || len(list.Items) != 10 {
				t.Fatalf("after restoring the backup: %v ConfigMaps, err %v; want 10", len(list.Items), err)
			}
			s.stopOK(t)
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestStartupInterruptible sends SIGTERM to `up` at points spread over its
// start-up (etcd starting, the API server, the DNS servers): it must exit
// within seconds each time.
func TestStartupInterruptible(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, delay := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			p, err := startProcess("dnsplane up", dnsplaneBin, "up", "--data-dir", dir, "--secure-port", "0",
				"--dns-listen", testkit.FreeUDPTCPAddr(t),
				"--nodecache-listen", testkit.FreeUDPTCPAddr(t), "--upstream", "127.0.0.1:9")
			if err != nil {
				t.Fatal(err)
			}
			defer p.kill()
			time.Sleep(delay)
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.exited:
			case <-time.After(15 * time.Second):
				t.Fatalf("up did not exit within 15s of SIGTERM sent %v into start-up\n%s", delay, p.stderr.tail())
			}
			// Whatever the point, nothing is left holding the data dir.
			out, _ := exec.Command("pgrep", "-f", "etcd-member --data-dir "+filepath.Join(dir, "etcd")).Output()
			if len(strings.TrimSpace(string(out))) > 0 {
				t.Fatalf("etcd member still running after up exited: pids %s", out)
			}
		})
	}
}

// TestDNSSurvivesEtcdOutage fills the disk under etcd: etcd fails a commit
// and exits. `up` must stay alive with both DNS servers answering from
// their caches, the API must answer errors rather than hang forever, and
// once space is back the API must recover with every acknowledged write.
//
// The data dir's etcd/ is a small tmpfs in a private mount namespace, which
// needs root (CAP_SYS_ADMIN) and unshare(1).
func TestDNSSurvivesEtcdOutage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs under the data dir (a full disk)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1) from util-linux")
	}
	dir := filepath.Join(t.TempDir(), "data")
	etcdDir := filepath.Join(dir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// etcd preallocates two 64 MB WAL segments; 200 MiB leaves room to
	// start, and the filler below takes the rest.
	wrapper := []string{"unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount -t tmpfs -o size=200m tmpfs "$0" && exec "$@"`, etcdDir}
	u := startUp(t, dir, wrapper)
	u.requireDNS(t, "before the outage")
	cs := clientFor(t, u.Kubeconfig)

	// The process is sh until exec; /proc/PID/root reaches its mount
	// namespace, where the tmpfs is.
	filler := filepath.Join("/proc", strconv.Itoa(u.cmd.Process.Pid), "root", etcdDir, "filler")
	fill := exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=1M")
	if out, err := fill.CombinedOutput(); err != nil && !strings.Contains(string(out), "No space left") {
		t.Fatalf("filling the disk: %v: %s", err, out)
	}

	// Write until etcd gives up; keep the names the API acknowledged.
	var acked []string
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cm := configMap(fmt.Sprintf("full-%d", i), i)
		cm.Data["pad"] = strings.Repeat("x", 64<<10)
		_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
		cancel()
		if err != nil {
			break
		}
		acked = append(acked, cm.Name)
	}
	if _, err := u.stderr.waitFor(30*time.Second, u.exited, func(s string) bool {
		return strings.Contains(s, "embedded etcd exited")
	}); err != nil {
		t.Fatalf("etcd did not fail on the full disk: %v", err)
	}

	// The outage: DNS answers, the API answers errors, the process lives.
	for i := range 5 {
		u.requireDNS(t, fmt.Sprintf("during the outage (%d)", i))
		time.Sleep(500 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, configMap("during", 0), metav1.CreateOptions{})
	cancel()
	if err == nil {
		t.Fatal("a write succeeded with the disk full")
	}
	if !u.running() {
		t.Fatalf("up exited during the outage: %v", u.err)
	}

	// Space comes back: the supervisor restarts etcd and the API recovers.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, configMap("after", 0), metav1.CreateOptions{})
		return err == nil, fmt.Sprintf("write after space came back: %v", err)
	})
	for _, name := range acked {
		if _, err := cs.CoreV1().ConfigMaps("default").Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{}); err != nil {
			t.Errorf("acknowledged write %s lost: %v", name, err)
		}
	}
	u.requireDNS(t, "after recovery")
	t.Logf("%d writes acknowledged before etcd failed; all present after recovery", len(acked))
}

// TestCtrlCStopsCleanly sends SIGINT to up's whole process group, as a
// terminal's Ctrl-C does: the etcd member gets it too and must leave the
// stop to its supervisor (etcd last), so the shutdown logs no etcd failure
// and exits 0.
func TestCtrlCStopsCleanly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := &process{name: "dnsplane up", cmd: exec.Command(dnsplaneBin, "up", "--data-dir", dir, "--secure-port", "0",
		"--dns-listen", testkit.FreeUDPTCPAddr(t),
		"--nodecache-listen", testkit.FreeUDPTCPAddr(t), "--upstream", "127.0.0.1:9"),
		stdout: newOutputBuffer(), stderr: newOutputBuffer(), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	// A process group of its own, like a shell job, so the signal below
	// reaches up and its etcd member but not this test.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	defer p.kill()
	if _, err := p.stdout.waitFor(serverStartTimeout, p.exited, upRE.MatchString); err != nil {
		t.Fatalf("waiting for up: %v\n%s", err, p.stderr.tail())
	}
	// Only what the shutdown logs counts: etcd logs a benign ERROR at
	// start now and then ("cannot detect storage schema version: missing
	// term information", before its first raft term is stored).
	startLog := len(p.stderr.String())
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("up did not exit within 30s of Ctrl-C\n%s", p.stderr.tail())
	}
	if p.err != nil {
		t.Errorf("exit: %v, want 0\n%s", p.err, p.stderr.tail())
	}
	if log := p.stderr.String()[startLog:]; strings.Contains(log, "embedded etcd exited") || strings.Contains(log, "level=ERROR") {
		t.Errorf("the shutdown logged an error:\n%s", log)
	}
}
