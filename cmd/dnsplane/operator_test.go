package main

import (
	"context"
	"strings"
	"testing"
)

func TestOperatorPrintCRD(t *testing.T) {
	out, errOut, code := runCmd(t, "", "operator", "--print-crd")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kind: CustomResourceDefinition", "name: dnses.operator.dnsplane.io", "scope: Cluster", "forwardPlugins:", "status: {}"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

func TestOperatorUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"operator"}, "--kubeconfig is required"},
		{[]string{"operator", "--kubeconfig", "k", "--service-cluster-ip-range", "nope"}, "--service-cluster-ip-range"},
	}
	for _, tt := range tests {
		_, errOut, code := runCmd(t, "", tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, exitUsage, tt.want)
		}
	}
}

// TestCorefileCheckChild runs the dry load as the operator does: in a
// child process (this test binary, standing in for dnsplane).
func TestCorefileCheckChild(t *testing.T) {
	checker, err := selfChecker()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, corefile, wantErr string
	}{
		{"loads", ".:5353 {\n    forward . 127.0.0.1:53\n}\n", ""},
		{"unknown plugin", ".:5353 {\n    policy round_robin\n}\n", "Unknown directive 'policy'"},
		{"bad forward", ".:5353 {\n    forward . not-an-address\n}\n", "Corefile does not load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checker.Check(context.Background(), []byte(tt.corefile))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.HasPrefix(err.Error(), "error: ") {
				t.Fatalf("Check = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestOperatorDNSImageFlag: the DaemonSet's image is --dns-image (issue
// 30's contract), defaulting to the data-plane image of this release;
// --image, its first name, is still accepted.
func TestOperatorDNSImageFlag(t *testing.T) {
	out, _, code := runCmd(t, "", "operator", "--help")
	if code != 0 || !strings.Contains(out, `--dns-image string`) || !strings.Contains(out, `(default "ghcr.io/dnsplane/dnsplane-dns:v0.1.0")`) || strings.Contains(out, "--image ") {
		t.Errorf("operator --help: exit %d\n%s", code, out)
	}
	_, errOut, code := runCmd(t, "", "operator", "--image", "x", "--kubeconfig", "k", "--service-cluster-ip-range", "nope")
	if code != exitUsage || !strings.Contains(errOut, "--service-cluster-ip-range") {
		t.Errorf("--image: exit %d, stderr %q", code, errOut)
	}
}
