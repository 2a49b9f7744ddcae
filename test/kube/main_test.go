// Package kube is the end-to-end test of dnsplane as an add-on to a stock
// cluster (issue 30 item 5, docs/kubernetes.md): the real kube-apiserver
// 1.37.2 of our go.mod runs in this test process (upstream's
// cmd/kube-apiserver/app/testing, as upstream's integration tests run it),
// `dnsplane controllers`, `dnsplane scheduler` and two `dnsplane agent`
// nodes run as processes, real kubectl installs the manifests, and the
// pods of the install run as host processes with their pods' identities.
//
// The test runs in a network namespace of its own (TestMain re-executes
// the test binary under `unshare --net`), where the cluster's addresses
// are local: kube-apiserver refuses loopback addresses in EndpointSlices
// (so a webhook Service cannot lead to a 127.x pod IP), and there the pod
// CIDRs, the Service range and the node cache's link-local address are
// routed to lo, so pods' processes bind their pod IPs, the cluster DNS
// binds its Service IP 10.96.0.53 as kube-proxy would deliver it, and no
// address or port of the machine is used.
package kube

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

var (
	// skipReason names the missing tool when the test cannot run here.
	skipReason string
	// workDir holds the binaries built for the run (0755: exec sessions
	// run as the pods' unprivileged users, docs/exec.md).
	workDir string
	// dnsplaneBin is cmd/dnsplane; dnsBin is cmd/dnsplane-dns when the
	// module has it (the data-plane binary of the images), else dnsplaneBin,
	// whose dns and nodecache commands are the same code.
	dnsplaneBin, dnsBin string
	// kubectlBin is the kubectl on PATH.
	kubectlBin string
	// moduleDir is the module's root (docs, deploy/manifests).
	moduleDir string
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

// Environment of the re-executed test binary.
const (
	envInNetns = "DNSPLANE_KUBE_NETNS" // set: this is the test inside its namespace
	envWorkDir = "DNSPLANE_KUBE_WORKDIR"
)

// Routes of the test's network namespace: each prefix is local, so any
// address in it can be bound (the "AnyIP" local route). The node cache's
// address is not among them: the node cache's --setup-interface puts it
// on an interface of its own (install).
var localRoutes = []string{
	podNetwork,   // pod CIDRs
	serviceRange, // Service IPs: the cluster DNS binds 10.96.0.53
	nodeNetwork,  // nodes' InternalIPs
}

func runTests(m *testing.M) int {
	if os.Getenv(envInNetns) != "" {
		return runInNetns(m)
	}
	if os.Geteuid() != 0 {
		skipReason = "needs root (a network namespace, the agents' pod sandboxes, port 53)"
	}
	// kubectl applies the install; unshare (util-linux) and ip (iproute2)
	// make the network and the pods' mount namespaces.
	for _, tool := range []string{"kubectl", "unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil && skipReason == "" {
			skipReason = "needs " + tool + " on PATH: " + err.Error()
		}
	}
	kubectlBin, _ = exec.LookPath("kubectl")
	if skipReason != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "dnsplane-kube-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "kube:", err)
		return 1
	}
	workDir = dir
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "kube:", err)
		return 1
	}
	// The tests themselves run in the namespace, with the same flags.
	cmd := exec.Command("unshare", append([]string{"--net", os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), envInNetns+"=1", envWorkDir+"="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "kube: running the tests in a network namespace:", err)
		return 1
	}
	return 0
}

// runInNetns sets the namespace's network up and runs the tests.
func runInNetns(m *testing.M) int {
	workDir = os.Getenv(envWorkDir)
	kubectlBin, _ = exec.LookPath("kubectl")
	if err := locate(workDir); err != nil {
		fmt.Fprintln(os.Stderr, "kube:", err)
		return 1
	}
	setup := [][]string{{"link", "set", "lo", "up"}}
	for _, r := range localRoutes {
		setup = append(setup, []string{"route", "add", "local", r, "dev", "lo"})
	}
	for _, args := range setup {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "kube: ip %s: %v\n%s", strings.Join(args, " "), err, out)
			return 1
		}
	}
	return m.Run()
}

// requireTools skips t, naming what is missing, when the test cannot run.
func requireTools(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// build builds the binaries of the module the test runs in into binDir.
func build(binDir string) error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return errors.New("go env GOMOD: not inside a module")
	}
	dir := filepath.Dir(gomod)
	pkgs := []string{"./cmd/dnsplane"}
	if _, err := os.Stat(filepath.Join(dir, "cmd", "dnsplane-dns")); err == nil {
		pkgs = append(pkgs, "./cmd/dnsplane-dns")
	}
	cmd := exec.Command("go", append([]string{"build", "-o", binDir + "/"}, pkgs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return locate(binDir)
}

// locate finds the module and the binaries build wrote to binDir.
func locate(binDir string) error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	moduleDir = filepath.Dir(strings.TrimSpace(string(out)))
	dnsplaneBin = filepath.Join(binDir, "dnsplane")
	dnsBin = dnsplaneBin
	if _, err := os.Stat(filepath.Join(binDir, "dnsplane-dns")); err == nil {
		dnsBin = filepath.Join(binDir, "dnsplane-dns")
	}
	return nil
}
