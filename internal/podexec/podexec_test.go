//go:build linux

package podexec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// testEtcEnv makes the test binary, standing in for dnsplane, mount on
// another /etc: the symlink test's, so the host's is not involved.
const testEtcEnv = "PODEXEC_TEST_ETC"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Subcommand {
		if etc := os.Getenv(testEtcEnv); etc != "" {
			dir, id, argv, err := ParseArgs(os.Args[2:])
			if err == nil {
				err = enter(dir, etc)
			}
			if err == nil {
				err = Restrict(id)
			}
			if err == nil {
				err = execve(argv[0], argv, os.Environ())
			}
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(ExitCannotRun)
		}
		code, err := Main(os.Args[2:])
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

const (
	podResolv = "search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
	podHosts  = "127.0.0.1\tlocalhost\n10.244.0.7\tweb.ns1.pod-test.example web\n"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (mount namespaces)")
	}
}

// podDir writes a pod's files where the agent would.
func podDir(t *testing.T) string {
	t.Helper()
	dir := podfiles.Dir(t.TempDir(), "ns1", "web", "uid-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{podfiles.ResolvConf: podResolv, podfiles.Hosts: podHosts} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func run(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func self(t *testing.T, dir string, argv ...string) *exec.Cmd {
	t.Helper()
	return selfAs(t, dir, Identity{UID: Nobody, GID: Nobody}, argv...)
}

func selfAs(t *testing.T, dir string, id Identity, argv ...string) *exec.Cmd {
	t.Helper()
	return Command(t.Context(), []string{os.Args[0]}, dir, id, argv)
}

func TestPodFilesOnEtc(t *testing.T) {
	requireRoot(t)
	dir := podDir(t)
	hostBefore, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Skipf("host has no /etc/resolv.conf: %v", err)
	}

	out, errOut, code := run(t, self(t, dir, "cat", "/etc/resolv.conf", "/etc/hosts"))
	if code != 0 || out != podResolv+podHosts {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// getent reads /etc/hosts through nsswitch, as a program's resolver.
	if _, err := exec.LookPath("getent"); err == nil {
		out, errOut, code = run(t, self(t, dir, "getent", "hosts", "web.ns1.pod-test.example"))
		if code != 0 || !strings.HasPrefix(out, "10.244.0.7") {
			t.Errorf("getent: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	}
	// Read-only, as kubelet mounts them.
	// As root, whom only the read-only mount stops.
	_, errOut, code = run(t, selfAs(t, dir, Identity{Privileged: true}, "sh", "-c", "echo x >> /etc/resolv.conf"))
	if code == 0 || !strings.Contains(errOut, "Read-only") {
		t.Errorf("writing /etc/resolv.conf: exit %d, stderr %q", code, errOut)
	}
	// The exit status is the command's.
	if _, _, code = run(t, self(t, dir, "sh", "-c", "exit 7")); code != 7 {
		t.Errorf("exit status %d, want 7", code)
	}
	// Nothing leaked into the host's mount namespace.
	if hostAfter, _ := os.ReadFile("/etc/resolv.conf"); !bytes.Equal(hostAfter, hostBefore) {
		t.Errorf("host /etc/resolv.conf changed to %q", hostAfter)
	}
}

func TestCommandNotFound(t *testing.T) {
	requireRoot(t)
	_, errOut, code := run(t, self(t, podDir(t), "no-such-command-dnsplane"))
	if code != ExitNotFound || !strings.Contains(errOut, "executable file not found") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestMissingFiles(t *testing.T) {
	dir := podDir(t)
	if err := os.Remove(filepath.Join(dir, podfiles.Hosts)); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, self(t, dir, "true"))
	if code != ExitCannotRun || !strings.Contains(errOut, "hosts: no such file") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestSymlinkedResolvConf: with systemd-resolved, /etc/resolv.conf is a
// symlink into /run; the pod's file covers its target, so both paths read
// the pod's file, and the host's file is untouched.
func TestSymlinkedResolvConf(t *testing.T) {
	requireRoot(t)
	dir := podDir(t)
	root := t.TempDir()
	etc, stub := filepath.Join(root, "etc"), filepath.Join(root, "run", "systemd", "resolve", "stub-resolv.conf")
	for _, d := range []string{etc, filepath.Dir(stub)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const hostStub = "nameserver 127.0.0.53\n"
	if err := os.WriteFile(stub, []byte(hostStub), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../run/systemd/resolve/stub-resolv.conf", filepath.Join(etc, "resolv.conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "hosts"), []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	catAll := func() *exec.Cmd {
		// As root: the stand-in /etc is under the test's private temp dir.
		cmd := selfAs(t, dir, Identity{Privileged: true}, "/bin/cat", filepath.Join(etc, "resolv.conf"), stub, filepath.Join(etc, "hosts"))
		cmd.Env = append(os.Environ(), testEtcEnv+"="+etc)
		return cmd
	}
	out, errOut, code := run(t, catAll())
	if code != 0 || out != podResolv+podResolv+podHosts {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got, _ := os.ReadFile(stub); string(got) != hostStub {
		t.Errorf("host's stub-resolv.conf now reads %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(etc, "resolv.conf")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("etc/resolv.conf is no longer a symlink: %v", err)
	}

	// A dangling symlink is refused rather than its target created.
	if err := os.Remove(stub); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = run(t, catAll())
	if code != ExitCannotRun || !strings.Contains(errOut, "no such file") {
		t.Errorf("dangling symlink: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Lstat(stub); err == nil {
		t.Errorf("the dangling symlink's target was created")
	}
}

// TestNeedsRoot: without CAP_SYS_ADMIN the subcommand says what it needs.
func TestNeedsRoot(t *testing.T) {
	requireRoot(t)
	// A copy of the test binary that the unprivileged user may run.
	binDir := t.TempDir()
	for d := binDir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(binDir, "podexec.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	dir := podDir(t)
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := Command(t.Context(), []string{bin}, dir, Identity{UID: Nobody, GID: Nobody}, []string{"true"})
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	_, errOut, code := run(t, cmd)
	want := "dnsplane exec needs root on Linux: creating a mount namespace: operation not permitted"
	if code != ExitCannotRun || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
	}
}

// TestStateDirFor: --state-dir wins; with --data-dir the pod's node's own
// state dir when `up` runs several nodes there, else <data-dir>/agent.
func TestStateDirFor(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "nodes", "node-2"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		stateDir, dataDir, node, want string
	}{
		{"/s", data, "node-2", "/s"},
		{"", data, "node-2", filepath.Join(data, "nodes", "node-2")},
		{"", data, "dnsplane", filepath.Join(data, "agent")},
		{"", "", "node-2", DefaultStateDir},
	}
	for _, tt := range tests {
		if got := StateDirFor(tt.stateDir, tt.dataDir)(tt.node); got != tt.want {
			t.Errorf("StateDirFor(%q, %q)(%q) = %s, want %s", tt.stateDir, tt.dataDir, tt.node, got, tt.want)
		}
	}
}

// TestRunsAsPodUser: a command runs as the pod's user with no capabilities
// and no_new_privs, so the data dir (the CA key, 0600 root's) is out of its
// reach while the pod's files on /etc are not; a privileged container's runs
// as root with root's capabilities (issue 22 item 3).
func TestRunsAsPodUser(t *testing.T) {
	requireRoot(t)
	dir := podDir(t)
	secret := filepath.Join(t.TempDir(), "ca.key")
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The key's directories are open to all, so only the key's own mode
	// stands between the command and it.
	for d := filepath.Dir(secret); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const status = `grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status | tr -s '\t' ' '`
	noCaps := "CapInh: 0000000000000000\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapBnd: 0000000000000000\nCapAmb: 0000000000000000\nNoNewPrivs: 1\n"
	tests := []struct {
		name       string
		id         Identity
		ids        string
		caps       string // "" = not checked
		readSecret bool
	}{
		{"nobody", Identity{UID: Nobody, GID: Nobody}, "65534 65534 65534\n", noCaps, false},
		{"pod's user and groups", Identity{UID: 1000, GID: 2000, Groups: []uint32{3000, 3001}}, "1000 2000 2000 3000 3001\n", noCaps, false},
		// uid 0 owns the key; without privileged it still has no
		// capabilities, which Pod Security's restricted level forbids.
		{"root user, not privileged", Identity{UID: 0, GID: Nobody}, "0 65534 65534\n", noCaps, true},
		{"privileged", Identity{Privileged: true}, "0 0 0\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, selfAs(t, dir, tt.id, "sh", "-c", `echo $(id -u) $(id -g) $(id -G)`))
			if code != 0 || out != tt.ids {
				t.Errorf("ids: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, tt.ids)
			}
			if tt.caps != "" {
				out, errOut, code = run(t, selfAs(t, dir, tt.id, "sh", "-c", status))
				if code != 0 || out != tt.caps {
					t.Errorf("capabilities: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, tt.caps)
				}
			}
			out, errOut, code = run(t, selfAs(t, dir, tt.id, "cat", "/etc/resolv.conf", secret))
			switch {
			case !strings.HasPrefix(out, podResolv):
				t.Errorf("the pod's resolv.conf: stdout %q, stderr %q", out, errOut)
			case tt.readSecret && (code != 0 || !strings.HasSuffix(out, "key")):
				t.Errorf("the key: exit %d, stdout %q, stderr %q", code, out, errOut)
			case !tt.readSecret && (code == 0 || !strings.Contains(errOut, "Permission denied")):
				t.Errorf("the key was readable: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
	// A setuid-root program gains nothing under no_new_privs.
	if su, err := exec.LookPath("su"); err == nil {
		if fi, err := os.Stat(su); err == nil && fi.Mode()&os.ModeSetuid != 0 {
			out, _, _ := run(t, selfAs(t, dir, Identity{UID: Nobody, GID: Nobody}, "sh", "-c", su+" -c 'id -u' root </dev/null 2>&1; true"))
			if strings.TrimSpace(out) == "0" {
				t.Errorf("su gave root: %q", out)
			}
		}
	}
}
