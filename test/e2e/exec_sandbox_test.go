package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecSandbox: exec sessions run in the pod's sandbox
// (internal/podsandbox, docs/exec.md), not as host processes: the pod's
// runAsUser, runAsGroup and supplementalGroups are IDs of the pod's own
// user namespace, so root and group 0 there own nothing of the host's, and
// a pod's sessions share a PID namespace and hostname of the pod's own
// (issue 29 findings 2, 3 and 4, and "a pod's hostname is the host's").
// One `up` for all the cases: each is slow to start.
func TestExecSandbox(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	// The data dir under a directory every user can traverse, as under a
	// home directory: what hides it is the sandbox, not a 0700 test dir.
	home, err := os.MkdirTemp(workDir, "home-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(home, ".dnsplane")
	u := startUp(t, dataDir, nil)
	ns := newNamespace(t, u.Kubeconfig)
	pod := func(name, extra string) {
		mustKubectl(t, u.Kubeconfig, podManifest(name, "ClusterFirst", extra), "apply", "-n", ns, "-f", "-")
	}
	pod("root", "  securityContext:\n    runAsUser: 0\n    runAsGroup: 0\n")
	pod("groups", "  securityContext:\n    runAsUser: 1000\n    supplementalGroups: [42, 0]\n")
	pod("postgres", "  securityContext:\n    runAsUser: 101\n    runAsGroup: 101\n")
	pod("a", "")
	pod("b", "  hostname: custom-host\n")
	mustKubectl(t, u.Kubeconfig, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "pod/root", "pod/groups", "pod/postgres", "pod/a", "pod/b")
	sh := func(pod, script string) (string, string, int) {
		t.Helper()
		return kubectl(t, u.Kubeconfig, "", "exec", "-n", ns, pod, "--", "sh", "-c", script)
	}

	// Host files only host root may change or read, where every user can
	// reach them.
	hostDir, err := os.MkdirTemp(workDir, "host-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hostDir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(hostDir, "shadow")
	if err := os.WriteFile(secret, []byte("root:secret\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(secret, 0, 0); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(hostDir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}

	t.Run("runAsUser 0 is not host root", func(t *testing.T) {
		tokens := filepath.Join(dataDir, "tokens.csv")
		before := readFile(t, tokens)
		out, errOut, code := sh("root", fmt.Sprintf(`id -u; echo 'x,system:masters-e2e,1,"system:masters"' >> %s; touch %s/made-by-root`, tokens, hostDir))
		if !strings.HasPrefix(out, "0\n") {
			t.Errorf("id -u: %q (stderr %q), want 0: the pod's own root", out, errOut)
		}
		if code == 0 {
			t.Errorf("writing %s and %s: exit 0, stderr %q", tokens, hostDir, errOut)
		}
		if after := readFile(t, tokens); after != before {
			t.Errorf("%s changed by a pod's session:\n%s", tokens, after)
		}
		if _, err := os.Stat(filepath.Join(hostDir, "made-by-root")); err == nil {
			t.Errorf("a session of runAsUser 0 created a file in the host's root-owned %s", hostDir)
		}
	})

	t.Run("supplementalGroups 0 is not the host's group 0", func(t *testing.T) {
		out, errOut, code := sh("groups", "id -G; cat "+secret)
		if code == 0 || strings.Contains(out, "secret") {
			t.Errorf("group 0 read the host's root:0 0640 file: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		if !strings.Contains(errOut, "Permission denied") {
			t.Errorf("stderr %q, want Permission denied", errOut)
		}
	})

	t.Run("runAsUser 101 is not the host's uid 101", func(t *testing.T) {
		f := filepath.Join(shared, "by-101")
		out, errOut, code := sh("postgres", "id -u; cat /proc/self/uid_map; touch "+f)
		if code != 0 {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if lines[0] != "101" {
			t.Errorf("id -u: %q, want 101 inside the pod", lines[0])
		}
		if len(lines) < 2 || strings.Fields(lines[1])[1] == "0" {
			t.Errorf("uid_map %q: the pod's IDs map onto host IDs from 0", out)
		}
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid < 65536 || st.Gid < 65536 {
			t.Errorf("the file a session of runAsUser 101 made is owned by host %d:%d, want IDs above 65535 (the pod's range)", st.Uid, st.Gid)
		}
	})

	t.Run("another pod's sessions are out of sight and reach", func(t *testing.T) {
		arg := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e6)
		backgroundSleep(t, u.Kubeconfig, ns, "b", arg)
		var hostPID string
		eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
			pids := sleepsWith(t, arg)
			if len(pids) == 1 {
				hostPID = pids[0]
			}
			return hostPID != "", "pod b's session is not running"
		})
		// From pod a: its PID as the host knows it, and any process whose
		// command line has arg.
		script := fmt.Sprintf(`kill -0 %s && echo KILLED; cat /proc/%s/root/etc/resolv.conf && echo READ; %s | grep -q . && echo SEEN; true`, hostPID, hostPID, findArg(arg))
		out, errOut, code := sh("a", script)
		if code != 0 || strings.Contains(out, "KILLED") || strings.Contains(out, "READ") || strings.Contains(out, "SEEN") {
			t.Errorf("pod a reached pod b's session (host pid %s): exit %d, stdout %q, stderr %q", hostPID, code, out, errOut)
		}
		if len(sleepsWith(t, arg)) != 1 {
			t.Errorf("pod b's session is gone")
		}
	})

	t.Run("a pod's sessions share its PID namespace", func(t *testing.T) {
		arg := fmt.Sprintf("601.%d", time.Now().UnixNano()%1e6)
		backgroundSleep(t, u.Kubeconfig, ns, "b", arg)
		eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
			return len(sleepsWith(t, arg)) == 1, "the first session is not running"
		})
		// PID 1 is the pod's sandbox, and the other session is there.
		out, errOut, code := sh("b", fmt.Sprintf(`tr '\0' ' ' < /proc/1/cmdline; echo; %s`, findArg(arg)))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) < 2 || !strings.Contains(lines[0], "__podsandbox") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want PID 1 the pod's sandbox and the other session", code, out, errOut)
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(lines[1], "pid "))
		if err != nil || pid >= 1000 {
			t.Errorf("the other session is %q: want a small PID of the pod's namespace", lines[1])
		}
	})

	t.Run("hostname is the pod's", func(t *testing.T) {
		host, _ := os.Hostname()
		for pod, want := range map[string]string{"a": "a", "b": "custom-host"} {
			out, errOut, code := sh(pod, "hostname")
			if code != 0 || strings.TrimSpace(out) != want {
				t.Errorf("pod %s: hostname %q (exit %d, stderr %q), want %q (the host's is %q)", pod, out, code, errOut, want, host)
			}
		}
	})

	t.Run("dnsplane exec finds ~/.dnsplane", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, dnsplaneBin, "exec", "-n", ns, "b", "--", "sh", "-c", "hostname; id -u")
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "custom-host\n65534\n" {
			t.Errorf("dnsplane exec with HOME=%s and no KUBECONFIG: %v\n%s", home, err, out)
		}
	})
}

// sleepsWith are the host pids of `sleep arg`: not kubectl's, whose
// command line has arg too.
func sleepsWith(t *testing.T, arg string) []string {
	t.Helper()
	var pids []string
	for _, pid := range processesWith(t, arg) {
		if comm, err := os.ReadFile(filepath.Join("/proc", pid, "comm")); err == nil && strings.TrimSpace(string(comm)) == "sleep" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// findArg is a shell script that prints "pid N" for each process in sight
// whose command line has arg. arg is joined from two halves in the shell,
// so the script's own command line does not have it.
func findArg(arg string) string {
	half := len(arg) / 2
	return fmt.Sprintf(`a=%s; b=%s; for p in /proc/[0-9]*; do c=$(tr '\0' ' ' < $p/cmdline 2>/dev/null); case "$c" in *"$a$b"*) echo "pid ${p#/proc/}";; esac; done`, arg[:half], arg[half:])
}

// backgroundSleep runs `sleep arg` in pod through kubectl exec until the
// test ends; arg marks its process for sleepsWith.
func backgroundSleep(t *testing.T, kubeconfig, ns, pod, arg string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bg := kubectlCommand(ctx, kubeconfig, "exec", "-n", ns, pod, "--", "sleep", arg)
	if err := bg.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = bg.Wait() })
}
