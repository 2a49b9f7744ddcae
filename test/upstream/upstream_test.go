//go:build linux

package upstream

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// Environment of the run (run.sh sets it).
const (
	// envEnable turns the test on.
	envEnable = "DNSPLANE_UPSTREAM_CONTROLLERS"
	// envBinDir is the directory holding kube-controller-manager and
	// kube-scheduler.
	envBinDir = "DNSPLANE_UPSTREAM_BIN"
	// envDnsplane is a prebuilt dnsplane binary; unset, the test builds
	// cmd/dnsplane.
	envDnsplane = "DNSPLANE_BIN"
	// envLogs, when set, is a directory the children's full logs are
	// written to.
	envLogs = "DNSPLANE_UPSTREAM_LOGS"
)

const (
	startTimeout = 60 * time.Second
	// syncTimeout bounds the wait for every informer: the controller
	// manager starts its controllers over about 20 s (its discovery and the
	// garbage collector's monitors come first).
	syncTimeout = 3 * time.Minute
	// settle is how long the logs are watched after everything synced, for
	// a watch that fails later.
	settle = 10 * time.Second
)

// TestUpstreamControllers starts `dnsplane apiserver`, then
// kube-controller-manager --controllers=* and kube-scheduler with its
// default profile against it.
func TestUpstreamControllers(t *testing.T) {
	if os.Getenv(envEnable) != "1" {
		t.Skipf("set %s=1 to run the real kube-controller-manager and kube-scheduler against dnsplane; bash test/upstream/run.sh builds them (about 11 minutes cold) and runs this test", envEnable)
	}
	binDir := os.Getenv(envBinDir)
	kcmBin, schedBin := filepath.Join(binDir, "kube-controller-manager"), filepath.Join(binDir, "kube-scheduler")
	for _, b := range []string{kcmBin, schedBin} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%s: %v (set %s to the directory run.sh builds them into)", b, err, envBinDir)
		}
	}
	dir := t.TempDir()
	apiserver := startAPIServer(t, dnsplaneBinary(t, dir), filepath.Join(dir, "data"))
	client := clientFor(t, apiserver.kubeconfig)

	kcm := start(t, "kube-controller-manager", kcmBin,
		"--kubeconfig="+apiserver.kubeconfig,
		"--controllers=*",
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--flex-volume-plugin-dir="+filepath.Join(dir, "flexvolume"),
	)
	schedPort := testkit.FreePort(t)
	sched := start(t, "kube-scheduler", schedBin,
		"--config="+schedulerConfig(t, dir, apiserver.kubeconfig),
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(schedPort),
		// /readyz is asked anonymously: dnsplane serves no TokenReview
		// or SubjectAccessReview for delegated authentication.
		"--authentication-skip-lookup",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez",
	)

	t.Run("controller manager caches sync", func(t *testing.T) { waitAllSynced(t, kcm, syncTimeout) })
	t.Run("scheduler ready", func(t *testing.T) { waitSchedulerReady(t, sched, schedPort) })
	t.Run("pod scheduled to a node", func(t *testing.T) { checkScheduled(t, client) })

	// Whatever failed, at start or since: every failing line is reported.
	// The children run on for settle, in which a watch that fails later
	// shows.
	_ = wait.PollUntilContextTimeout(t.Context(), time.Second, settle, false, func(context.Context) (bool, error) {
		return len(failingLines(kcm.stderr.String()))+len(failingLines(sched.stderr.String())) > 0, nil
	})
	for _, p := range []*process{kcm, sched} {
		if bad := failingLines(p.stderr.String()); len(bad) > 0 {
			t.Errorf("%s logged %d failures to list or watch:\n%s", p.name, len(bad), strings.Join(bad, "\n"))
		}
		if !p.running() {
			t.Errorf("%s exited: %v", p.name, p.err)
		}
	}
}

// waitAllSynced waits until every cache the controller manager waits for
// has synced. Its controllers start concurrently with jitter and log no
// "all started", so the wait ends when nothing waits and no new waiter
// appeared for quiet.
func waitAllSynced(t *testing.T, p *process, timeout time.Duration) {
	t.Helper()
	const quiet = 15 * time.Second
	var (
		last       syncs
		lastChange time.Time
	)
	last.started = -1
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, timeout, true, func(context.Context) (bool, error) {
		if !p.running() {
			return false, fmt.Errorf("%s exited: %w", p.name, p.err)
		}
		now := countSyncs(p.stderr.String())
		if now.started != last.started {
			lastChange = time.Now()
		}
		last = now
		return last.started > 0 && last.waiting() == 0 && time.Since(lastChange) >= quiet, nil
	})
	if err != nil {
		t.Errorf("%s: not synced within %v (%v): %v\nfailures:\n%s", p.name, timeout, err, last,
			strings.Join(failingLines(p.stderr.String()), "\n"))
		return
	}
	t.Logf("%s: %d caches synced", p.name, last.started)
}

// waitSchedulerReady waits for the scheduler's /readyz, whose
// sched-handler-sync check passes once its event handlers' informers
// synced.
func waitSchedulerReady(t *testing.T, p *process, port int) {
	t.Helper()
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz?verbose", port)
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, syncTimeout, true, func(ctx context.Context) (bool, error) {
		if !p.running() {
			return false, fmt.Errorf("%s exited: %w", p.name, p.err)
		}
		code, body, err := getInsecure(ctx, url)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("%d %s", code, body)
		return code == 200, nil
	})
	if err != nil {
		t.Errorf("%s /readyz: %v; last answer: %s", p.name, err, last)
		return
	}
	t.Logf("%s /readyz: %s", p.name, last)
	if s := countSyncs(p.stderr.String()); s.waiting() > 0 {
		t.Errorf("%s is ready with %v", p.name, s)
	}
}

// checkScheduled creates a ready Node and a pod, and waits for the
// scheduler to bind the pod to the node.
func checkScheduled(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	resources := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1",
		Labels: map[string]string{corev1.LabelHostname: "node-1", corev1.LabelOSStable: "linux"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The controller manager's node controllers write the new node too.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if node, err = c.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
			return err
		}
		now := metav1.Now()
		node.Status.Capacity, node.Status.Allocatable = resources, resources
		node.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err = c.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "scheduled", Namespace: "default"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err = c.CoreV1().Pods("default").Get(ctx, "scheduled", metav1.GetOptions{})
		return err == nil && got.Spec.NodeName != "", nil
	})
	if err != nil {
		t.Fatalf("pod not scheduled: %v; status %+v", err, got.Status)
	}
	if got.Spec.NodeName != "node-1" {
		t.Errorf("pod scheduled to %q, want node-1", got.Spec.NodeName)
	}
}

// schedulerConfig writes kube-scheduler's configuration: the default
// profile, this kubeconfig, no leader election.
func schedulerConfig(t *testing.T, dir, kubeconfig string) string {
	t.Helper()
	path := filepath.Join(dir, "scheduler.yaml")
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
`, kubeconfig)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// dnsplaneBinary is $DNSPLANE_BIN or cmd/dnsplane built into dir.
func dnsplaneBinary(t *testing.T, dir string) string {
	t.Helper()
	if b := os.Getenv(envDnsplane); b != "" {
		return b
	}
	bin := filepath.Join(dir, "dnsplane")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/dnsplane/dnsplane/cmd/dnsplane")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type apiServer struct {
	*process
	kubeconfig string
}

var servingRE = regexp.MustCompile(`(?m)^dnsplane API server at (https://\S+)\nkubeconfig: (\S+)\n`)

// startAPIServer starts a bare `dnsplane apiserver` and waits for it to
// serve.
func startAPIServer(t *testing.T, bin, dataDir string) *apiServer {
	t.Helper()
	p := start(t, "dnsplane apiserver", bin, "apiserver", "--data-dir", dataDir, "--secure-port", "0")
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, startTimeout, true, func(context.Context) (bool, error) {
		if !p.running() {
			return false, fmt.Errorf("exited: %w", p.err)
		}
		return servingRE.MatchString(p.stdout.String()), nil
	})
	if err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", p.name, err, p.stderr.Tail(8000))
	}
	return &apiServer{process: p, kubeconfig: servingRE.FindStringSubmatch(p.stdout.String())[2]}
}

func clientFor(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// process is a child the test owns: stopped at cleanup, its log kept in
// the test's temp dir and its tail shown when the test failed.
type process struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *testkit.Buffer
	exited         chan struct{}
	err            error // cmd.Wait's, set before exited closes
}

func start(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(bin, args...), stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	// The kernel kills the child if the test binary dies without cleanup.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if p.running() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		if dir := os.Getenv(envLogs); dir != "" {
			logFile := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".log")
			if err := os.WriteFile(logFile, []byte(p.stderr.String()), 0o600); err != nil {
				t.Errorf("keeping the log of %s: %v", name, err)
			} else {
				t.Logf("%s: full log in %s", name, logFile)
			}
		}
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, p.stderr.Tail(8000))
		}
	})
	return p
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// getInsecure GETs url from a server whose certificate is self-signed
// (the scheduler's serving certificate).
func getInsecure(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second} //nolint:gosec // a local test server's self-signed certificate
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
