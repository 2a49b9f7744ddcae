package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// Start and stop as a user feels them (issue 21 item 3, docs/operations.md
// "Start-up" and "Stopping").

// stoppingLine is what `up` prints on the first signal.
const stoppingLine = "stopping (press Ctrl-C again to force)"

// upNodes3 starts `up --nodes 3` with its DNS on a free port of
// 127.0.53.x (node caches on .10 to .12), plus extra flags.
func upNodes3(t *testing.T, dataDir string, extra ...string) *upServer {
	t.Helper()
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	args := append([]string{"--nodes", "3", "--dns-listen", fmt.Sprintf("127.0.53.1:%d", port),
		"--nodecache-listen", fmt.Sprintf("127.0.53.10:%d", port)}, extra...)
	return startUp(t, dataDir, nil, args...)
}

// signalAndWait sends sig and returns how long the process took to exit,
// failing the test after limit.
func signalAndWait(t *testing.T, p *process, sig os.Signal, limit time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		return time.Since(t0)
	case <-time.After(limit):
		t.Fatalf("%s did not exit within %v of %v; stderr:\n%s", p.name, limit, sig, p.stderr.tail())
		return 0
	}
}

// TestStopInOrder: Ctrl-C stops `up --nodes 3` in order within a few
// seconds, idle and with pods, says that it stops, exits 0 and leaves
// neither the lock nor the control socket behind.
func TestStopInOrder(t *testing.T) {
	for _, load := range []int{0, 30} {
		t.Run(fmt.Sprintf("%d pods", load), func(t *testing.T) {
			if load > 0 {
				requireKubectl(t)
			}
			dataDir := filepath.Join(t.TempDir(), "data")
			u := upNodes3(t, dataDir)
			if load > 0 {
				ns := newNamespace(t, u.Kubeconfig)
				mustKubectl(t, u.Kubeconfig, "", "create", "deployment", "web", "-n", ns, "--image=example", "--replicas="+strconv.Itoa(load))
				mustKubectl(t, u.Kubeconfig, "", "expose", "deployment", "web", "-n", ns, "--port=80")
				mustKubectl(t, u.Kubeconfig, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=120s")
			}
			took := signalAndWait(t, u.process, os.Interrupt, 10*time.Second)
			t.Logf("up --nodes 3 with %d pods stopped in %v", load, took.Round(time.Millisecond))
			if u.err != nil {
				t.Errorf("exit: %v; want 0", u.err)
			}
			if !strings.Contains(u.stderr.String(), stoppingLine+"\n") {
				t.Errorf("stderr lacks %q", stoppingLine)
			}
			if !regexp.MustCompile(`(?m)^stopped in \d+\.\d\ds$`).MatchString(u.stderr.String()) {
				t.Errorf("stderr lacks \"stopped in N.NNs\":\n%s", u.stderr.tail())
			}
			for _, name := range []string{"up.lock", "up.sock"} {
				if _, err := os.Lstat(filepath.Join(dataDir, name)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s after the stop: %v; want none", name, err)
				}
			}
		})
	}
}

// TestStopForcedBySecondSignal: a second Ctrl-C or SIGTERM while the
// ordered stop runs (made slow by the hidden --test-stop-delay) exits at
// once with the shell's status for the signal and a line saying so; the
// data dir is free again at once (the kernel drops the lock, the etcd
// child dies with its parent) and `up` starts on it again.
func TestStopForcedBySecondSignal(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "interrupt (Ctrl-C)"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "data")
			u := upNodes3(t, dataDir, "--test-stop-delay", "5m")
			if err := u.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if _, err := u.stderr.waitFor(10*time.Second, u.exited, func(s string) bool { return strings.Contains(s, stoppingLine) }); err != nil {
				t.Fatalf("no %q: %v", stoppingLine, err)
			}
			// Sent until it exits: one that comes within 100 ms of the
			// first counts as its duplicate (cmd/dnsplane forceOnSecond).
			t0 := time.Now()
			err := wait.PollUntilContextTimeout(t.Context(), 150*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
				if !u.running() {
					return true, nil
				}
				if err := u.cmd.Process.Signal(tt.sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
					return false, err
				}
				return false, nil
			})
			if err != nil && u.running() {
				t.Fatalf("still running 5s after the second %v: %v", tt.sig, err)
			}
			<-u.exited
			t.Logf("forced exit %v after the second signal", time.Since(t0).Round(time.Millisecond))
			var ee *exec.ExitError
			if !errors.As(u.err, &ee) || ee.ExitCode() != tt.code {
				t.Errorf("exit: %v; want status %d", u.err, tt.code)
			}
			want := "forced exit: a second " + tt.name + " before the stop ended; components were not stopped in order\n"
			if !strings.Contains(u.stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, u.stderr.tail())
			}
			again := upNodes3(t, dataDir)
			if err := again.stop(); err != nil {
				t.Errorf("up again on the data dir: %v", err)
			}
		})
	}
}

// TestDataDirInUse: a second `up`, or an `apiserver`, on the data dir of a
// running `up` fails at once, naming it and its pid, before it touches
// anything.
func TestDataDirInUse(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	u := upNodes3(t, dataDir)
	want := fmt.Sprintf("error: data dir %s is in use by dnsplane up (pid %d); stop it or choose another --data-dir\n", dataDir, u.cmd.Process.Pid)
	before := treeHashE2E(t, dataDir, "etcd", "nodes", "up.sock", "cluster-dns", "up.json")
	for _, args := range [][]string{
		{"up", "--data-dir", dataDir, "--secure-port", "0", "--dns-listen", "127.0.53.200:5353", "--nodecache-listen", "127.0.53.201:5353", "--upstream", "127.0.0.1:9"},
		{"apiserver", "--data-dir", dataDir, "--secure-port", "0"},
	} {
		cmd := exec.CommandContext(ctxFor(t, 30*time.Second), dnsplaneBin, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || stderr.String() != want || stdout.String() != "" {
			t.Errorf("dnsplane %s: %v, stdout %q, stderr %q; want exit 2 and %q", args[0], err, stdout.String(), stderr.String(), want)
		}
	}
	if after := treeHashE2E(t, dataDir, "etcd", "nodes", "up.sock", "cluster-dns", "up.json"); after != before {
		t.Error("the refused start modified the data dir")
	}
	if err := u.stop(); err != nil {
		t.Error(err)
	}
}

// TestUpRefusesDamagedDatabase: garbage in the middle of etcd's database
// (which makes bbolt panic: only the etcd child dies) is refused naming
// the file, and the data dir is left exactly as it was: etcd does not
// "repair" it.
func TestUpRefusesDamagedDatabase(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	u := upNodes3(t, dataDir)
	if err := u.stop(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dataDir, "etcd", "member", "snap", "db")
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Page 2 on: past bbolt's two meta pages, whose spare would hide
	// damage to one of them.
	_, err = f.WriteAt([]byte(strings.Repeat("garbage!", 1024)), 2*4096)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	before := treeHashE2E(t, dataDir)
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	cmd := exec.CommandContext(ctxFor(t, 90*time.Second), dnsplaneBin, "up", "--data-dir", dataDir, "--secure-port", "0", "--nodes", "3",
		"--dns-listen", fmt.Sprintf("127.0.53.1:%d", port), "--nodecache-listen", fmt.Sprintf("127.0.53.10:%d", port), "--upstream", "127.0.0.1:9")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	want := "etcd data dir " + filepath.Join(dataDir, "etcd") + " is damaged: database member/snap/db"
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("up on a damaged database: %v; want exit 1 and %q in:\n%s", err, want, stderr.String())
	}
	if after := treeHashE2E(t, dataDir); after != before {
		t.Error("the refused start modified the data dir")
	}
}

// treeHashE2E is every path under root with its mode and content, leaving
// out the top-level entries skip (what a running `up` changes by itself).
func treeHashE2E(t *testing.T, root string, skip ...string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, s := range skip {
			if rel == s || strings.HasPrefix(rel, s+string(filepath.Separator)) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%s\x00", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
