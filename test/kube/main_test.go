// Package kube is the end-to-end test of dnsplane as an add-on to a stock
// cluster (issue 30 item 5, docs/kubernetes.md): the real kube-apiserver
// 1.37.2 of our go.mod runs in this test process (upstream's
// cmd/kube-apiserver/app/testing, as upstream's integration tests run it),
// `dnsplane controllers`, `dnsplane scheduler` and two `dnsplane agent`
// nodes run as processes, real kubectl installs the manifests, and the
// pods of the install run as host processes with their pods' identities.
package kube

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

func runTests(m *testing.M) int {
	switch k, err := exec.LookPath("kubectl"); {
	case os.Geteuid() != 0:
		skipReason = "needs root (the agents' pod sandboxes and port 53 on loopback addresses)"
	case err != nil:
		skipReason = "needs kubectl on PATH: " + err.Error()
	default:
		kubectlBin = k
	}
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
	return m.Run()
}

// requireTools skips t, naming what is missing, when the test cannot run.
func requireTools(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// build builds the binaries of the module the test runs in.
func build(dir string) error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return errors.New("go env GOMOD: not inside a module")
	}
	moduleDir = filepath.Dir(gomod)
	pkgs := []string{"./cmd/dnsplane"}
	if _, err := os.Stat(filepath.Join(moduleDir, "cmd", "dnsplane-dns")); err == nil {
		pkgs = append(pkgs, "./cmd/dnsplane-dns")
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	dnsplaneBin = filepath.Join(dir, "dnsplane")
	dnsBin = dnsplaneBin
	if len(pkgs) > 1 {
		dnsBin = filepath.Join(dir, "dnsplane-dns")
	}
	return nil
}
