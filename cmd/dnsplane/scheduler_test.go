package main

import (
	"strings"
	"testing"
)

func TestSchedulerUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"scheduler"}, "--kubeconfig is required"},
		{[]string{"scheduler", "--kubeconfig", "/does/not/exist"}, "--kubeconfig"},
		{[]string{"scheduler", "--kubeconfig", "k", "--leader-elect=maybe"}, "--leader-elect"},
		{[]string{"scheduler", "--kubeconfig", "k", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		_, errOut, code := runCmd(t, "", tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, exitUsage, tt.want)
		}
	}
}

func TestSchedulerHelp(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCmd(t, "", "scheduler", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"--leader-elect", "(default true)", "kube-system/kube-scheduler", "--kubeconfig"} {
		if !strings.Contains(out, want) {
			t.Errorf("help has no %q:\n%s", want, out)
		}
	}
}
