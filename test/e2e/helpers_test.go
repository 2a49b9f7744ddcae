package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

const (
	// serverStartTimeout bounds the wait for the server's "serving" lines.
	serverStartTimeout = 60 * time.Second
	// stopTimeout bounds a graceful stop (SIGTERM) before the child is killed.
	stopTimeout = 30 * time.Second
	// kubectlTimeout bounds one kubectl invocation.
	kubectlTimeout = 60 * time.Second
)

var (
	// dnsplaneBin is the binary TestMain built.
	dnsplaneBin string
	// workDir holds the binary, kubectl's cache and the shared server's data.
	workDir string
	// shared is the API server the kubectl tests share (one namespace each).
	shared struct {
		once sync.Once
		srv  *server
		err  error
	}
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dnsplane-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Commands exec'd in pods run as the pods' user (65534 by default,
	// docs/agent.md "Who the command runs as") and run the helpers built
	// here, as a container runs its image's programs: they must be able to.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	workDir = dir
	if dnsplaneBin, err = buildDnsplane(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if err := isolateFromMachine(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: stopping the shared API server: %v\nstderr:\n%s\n", err, shared.srv.stderr.tail())
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// buildDnsplane builds cmd/dnsplane of the module the tests run in.
func buildDnsplane(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside a module")
	}
	bin := filepath.Join(dir, "dnsplane")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/dnsplane/dnsplane/cmd/dnsplane")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// outputBuffer collects a child's output and signals every write.
type outputBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newOutputBuffer() *outputBuffer { return &outputBuffer{changed: make(chan struct{}, 1)} }

func (b *outputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (b *outputBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail is the end of the output, for failure messages.
func (b *outputBuffer) tail() string {
	const maxTail = 6000
	s := b.String()
	if len(s) > maxTail {
		return "…" + s[len(s)-maxTail:]
	}
	return s
}

// waitFor waits until match(output) holds, the writer exits or timeout passes.
func (b *outputBuffer) waitFor(timeout time.Duration, exited <-chan struct{}, match func(string) bool) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s := b.String()
		if match(s) {
			return s, nil
		}
		select {
		case <-b.changed:
		case <-exited:
			if s := b.String(); match(s) {
				return s, nil
			}
			return b.String(), errors.New("the process exited")
		case <-timer.C:
			return b.String(), fmt.Errorf("nothing matched within %v", timeout)
		}
	}
}

// process is a child process the tests own.
type process struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *outputBuffer
	exited         chan struct{}
	err            error // cmd.Wait's result, set before exited is closed
}

func startProcess(name, path string, args ...string) (*process, error) {
	p := &process{name: name, cmd: exec.Command(path, args...),
		stdout: newOutputBuffer(), stderr: newOutputBuffer(), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	dieWithParent(p.cmd)
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

// stop sends SIGTERM and waits for a clean exit; after stopTimeout the child
// is killed and stop reports it.
func (p *process) stop() error {
	if !p.running() {
		return fmt.Errorf("%s had already exited: %w", p.name, p.err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling %s: %w", p.name, err)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		if p.err != nil {
			return fmt.Errorf("%s exited after SIGTERM: %w", p.name, p.err)
		}
		return nil
	case <-timer.C:
		p.kill()
		return fmt.Errorf("%s did not exit within %v of SIGTERM; killed it", p.name, stopTimeout)
	}
}

// kill sends SIGKILL (if the child still runs) and waits for it to be gone.
func (p *process) kill() {
	if p.running() {
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
}

// server is a running `dnsplane apiserver` child.
type server struct {
	*process
	DataDir    string
	URL        string // https://127.0.0.1:PORT
	Kubeconfig string // the admin kubeconfig the server wrote
}

var servingRE = regexp.MustCompile(`(?m)^dnsplane API server at (https://\S+)\nkubeconfig: (\S+)\n`)

// launchServer starts `dnsplane apiserver` over dataDir on a free port and
// waits until it prints that it serves.
func launchServer(dataDir string, extra ...string) (*server, error) {
	// -v: the tests read start-up's info lines.
	args := append([]string{"apiserver", "--data-dir", dataDir, "--secure-port", "0", "-v"}, extra...)
	p, err := startProcess("dnsplane "+strings.Join(args, " "), dnsplaneBin, args...)
	if err != nil {
		return nil, err
	}
	out, err := p.stdout.waitFor(serverStartTimeout, p.exited, servingRE.MatchString)
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("%s: waiting for it to serve: %w (exit: %w)\nstdout:\n%s\nstderr:\n%s", p.name, err, p.err, out, p.stderr.tail())
	}
	m := servingRE.FindStringSubmatch(out)
	return &server{process: p, DataDir: dataDir, URL: m[1], Kubeconfig: m[2]}, nil
}

// startServer starts a server for this test; it is killed on cleanup, and
// its log is shown if the test failed.
func startServer(t *testing.T, dataDir string, extra ...string) *server {
	t.Helper()
	s, err := launchServer(dataDir, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("log of %s:\n%s", s.name, s.stderr.tail())
		}
	})
	return s
}

// stopOK stops s with SIGTERM and requires a clean exit.
func (s *server) stopOK(t *testing.T) {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, s.stderr.tail())
	}
}

// restart stops s gracefully and starts a new server over the same data dir
// with the given flags. The kubeconfig path stays the same (the server
// rewrites it with the new port).
func (s *server) restart(t *testing.T, extra ...string) *server {
	t.Helper()
	s.stopOK(t)
	return startServer(t, s.DataDir, extra...)
}

// sharedServer is one server for the tests that only need an API (each uses
// its own namespace); TestMain stops it.
func sharedServer(t *testing.T) *server {
	t.Helper()
	shared.once.Do(func() {
		shared.srv, shared.err = launchServer(filepath.Join(workDir, "shared"))
	})
	if shared.err != nil {
		t.Fatalf("starting the shared API server: %v", shared.err)
	}
	if !shared.srv.running() {
		t.Fatalf("the shared API server exited: %v\nstderr:\n%s", shared.srv.err, shared.srv.stderr.tail())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of the shared API server:\n%s", shared.srv.stderr.tail())
		}
	})
	return shared.srv
}

// requireKubectl skips the test when there is no kubectl to drive.
func requireKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skipf("kubectl is not on PATH (%v): these end-to-end tests drive the real kubectl (1.32)", err)
	}
}

// kubectl runs kubectl against kubeconfig with stdin as its input and
// returns what it printed and its exit status.
func kubectl(t *testing.T, kubeconfig, stdin string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := kubectlCommand(ctx, kubeconfig, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		return out.String(), errOut.String(), exitErr.ExitCode()
	default:
		t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errOut.String())
		return "", "", -1
	}
}

// kubectlCommand is the command line of one kubectl run; kubectl's discovery
// cache stays in the test's work dir.
func kubectlCommand(ctx context.Context, kubeconfig string, args ...string) *exec.Cmd {
	full := append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(workDir, "kubectl-cache")}, args...)
	return exec.CommandContext(ctx, "kubectl", full...)
}

// mustKubectl runs kubectl and fails the test unless it exits 0; it returns
// stdout.
func mustKubectl(t *testing.T, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := kubectl(t, kubeconfig, stdin, args...)
	if code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// run is what one kubectl invocation printed.
type run struct {
	stdout, stderr string
	exit           int
}

// wantKubectl runs kubectl and requires exactly want.
func wantKubectl(t *testing.T, kubeconfig, stdin string, want run, args ...string) {
	t.Helper()
	out, errOut, code := kubectl(t, kubeconfig, stdin, args...)
	if got := (run{out, errOut, code}); got != want {
		t.Errorf("kubectl %s:\ngot  exit %d\nstdout: %q\nstderr: %q\nwant exit %d\nstdout: %q\nstderr: %q",
			strings.Join(args, " "), got.exit, got.stdout, got.stderr, want.exit, want.stdout, want.stderr)
	}
}

// ok is a successful run that printed line (plus a newline) on stdout.
func ok(line string) run { return run{stdout: line + "\n"} }

// failed is a run that exited 1 with line (plus a newline) on stderr.
func failed(line string) run { return run{stderr: line + "\n", exit: 1} }

var nsCounter atomic.Int64

// namespaceName is a fresh namespace name derived from the test's name.
func namespaceName(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(t.Name())
	name = regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(name, "-")
	name = strings.Trim(name, "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	return fmt.Sprintf("%s-%d", name, nsCounter.Add(1))
}

// newNamespace creates a namespace for the test with kubectl.
func newNamespace(t *testing.T, kubeconfig string) string {
	t.Helper()
	ns := namespaceName(t)
	wantKubectl(t, kubeconfig, "", ok("namespace/"+ns+" created"), "create", "namespace", ns)
	return ns
}

// writeFile writes content into a file in a temporary directory of the test
// and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rewriteFile replaces the content of the file at path.
func rewriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readFile is the content of the file at path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// restConfig is client-go's configuration from a kubeconfig, speaking JSON
// and without client-side rate limiting.
func restConfig(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("loading %s: %v", kubeconfig, err)
	}
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.QPS, cfg.Burst = 10000, 10000
	return cfg
}

// clientFor is a typed client-go clientset speaking JSON.
func clientFor(t *testing.T, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restConfig(t, kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// eventually polls cond every interval until it holds; after timeout the
// test fails with cond's last message.
func eventually(t *testing.T, timeout, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	testkit.PollEvery(t, "condition", interval, timeout, explained(func(context.Context) (bool, string) { return cond() }))
}

// rows splits kubectl's table output into lines of fields.
func rows(out string) [][]string {
	var r [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			r = append(r, strings.Fields(line))
		}
	}
	return r
}

// rowFor is the row whose first field is name.
func rowFor(out, name string) []string {
	for _, r := range rows(out) {
		if r[0] == name {
			return r
		}
	}
	return nil
}

// ctxFor is a context for client-go calls that ends with the test.
func ctxFor(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
}
