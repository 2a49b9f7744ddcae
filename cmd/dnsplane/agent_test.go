package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent"}, "--kubeconfig is required"},
		{[]string{"agent", "--kubeconfig", kubeconfig, "--pod-cidr", "10.244.0.1/24"}, "--pod-cidr"},
		{[]string{"agent", "--kubeconfig", kubeconfig, "--node-ip", "x"}, "--node-ip"},
		{[]string{"agent", "--kubeconfig", kubeconfig, "--cluster-dns", "nope"}, "--cluster-dns"},
		{[]string{"agent", "--kubeconfig", kubeconfig, "--resolv-conf", "/does/not/exist"}, "--resolv-conf"},
		{[]string{"agent", "--kubeconfig", kubeconfig, "--daemon-port", "70000"}, "--daemon-port"},
	} {
		_, stderr, code := runCmd(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
