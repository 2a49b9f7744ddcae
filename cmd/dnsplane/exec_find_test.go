package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUpDataDir: the admin kubeconfig `up` wrote names its data dir, so
// `dnsplane exec` with KUBECONFIG set finds the pods' files; another
// kubeconfig names none.
func TestUpDataDir(t *testing.T) {
	t.Parallel()
	one, several, other := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(one, "agent"), filepath.Join(several, "nodes")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(one, "kubeconfig"), one},
		{filepath.Join(several, "kubeconfig"), several},
		{filepath.Join(other, "kubeconfig"), ""},
		{filepath.Join(one, "config"), ""},
		{"", ""},
	} {
		if got := upDataDir(tt.path); got != tt.want {
			t.Errorf("upDataDir(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestExecWithoutKubeconfig says how to get one, not client-go's
// KUBERNETES_MASTER.
func TestExecWithoutKubeconfig(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("exec runs on Linux")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", filepath.Join(home, "missing"))
	_, errOut, code := runCmd(t, "", "exec", "web", "--", "true")
	if code != exitUsage || !strings.Contains(errOut, "no kubeconfig: start dnsplane up and export KUBECONFIG=") || strings.Contains(errOut, "KUBERNETES_MASTER") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
