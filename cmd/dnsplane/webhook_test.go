package main

import (
	"strings"
	"testing"
)

func TestWebhookUsage(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"webhook"}, "--kubeconfig is required outside a cluster"},
		{[]string{"webhook", "--kubeconfig", "k", "--cluster-dns", "nope"}, `--cluster-dns: "nope" is not an IP address`},
		{[]string{"webhook", "--kubeconfig", "k", "--node-cache", "10.0.0.1,x"}, `--node-cache: "x" is not an IP address`},
		{[]string{"webhook", "--kubeconfig", "k", "--log-level", "loud"}, "--log-level"},
		{[]string{"webhook", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig"},
	}
	for _, tt := range tests {
		_, errOut, code := runCmd(t, "", tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, exitUsage, tt.want)
		}
	}
}
