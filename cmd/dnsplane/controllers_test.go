package main

import (
	"strings"
	"testing"
)

func TestControllersList(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCmd(t, "", "controllers", "--list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"deployment-controller ", "runs", "horizontal-pod-autoscaler-controller ", "disabled", "there is no metrics API"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

func TestControllersUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"controllers"}, "--kubeconfig is required"},
		{[]string{"controllers", "--kubeconfig", "k", "--controllers", "nope"}, `--controllers: "nope" is not a known controller`},
		{[]string{"controllers", "--kubeconfig", "k", "--controllers", "*,horizontal-pod-autoscaler-controller"}, "does not run in dnsplane: there is no metrics API"},
		{[]string{"controllers", "--kubeconfig", "k", "--cluster-signing-cert-file", "ca.crt"}, "--cluster-signing-cert-file and --cluster-signing-key-file go together"},
		{[]string{"apiserver", "--controllers", "nope"}, `--controllers: "nope" is not a known controller`},
	} {
		_, errOut, code := runCmd(t, "", tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, exitUsage, tt.want)
		}
	}
}
