package main

import (
	"strings"
	"testing"
)

// TestLimitFlags checks that apiserver and up take kube-apiserver's limit
// flags and refuse negative values before starting anything, as a usage
// error.
func TestLimitFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-requests-inflight", "-1"}, "error: --max-requests-inflight can not be negative value\n"},
		{[]string{"--max-mutating-requests-inflight", "-5"}, "error: --max-mutating-requests-inflight can not be negative value\n"},
		{[]string{"--request-timeout", "-1s"}, "error: --request-timeout can not be negative value\n"},
		{[]string{"--max-connections", "-1"}, "error: --max-connections can not be negative value\n"},
		{[]string{"--kubelet-allowed-ports", "10250,70000"}, "error: --kubelet-allowed-ports: 70000 is not a port\n"},
	}
	holdDefaultDNS(t) // as another `up` would: flags are checked first
	for _, cmd := range []string{"apiserver", "up"} {
		for _, tt := range tests {
			args := append([]string{cmd, "--data-dir", t.TempDir()}, tt.args...)
			out, errOut, code := runCmd(t, "", args...)
			if code != exitUsage || out != "" || errOut != tt.want {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(args, " "), code, out, errOut, exitUsage, tt.want)
			}
		}
	}
}
