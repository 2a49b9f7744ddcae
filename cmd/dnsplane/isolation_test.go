package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// machineHome is HOME as the test binary found it: the home of the user
// whose `dnsplane up` may be running on its defaults while the tests run.
var machineHome = os.Getenv("HOME")

// isolateFromMachine points HOME at an empty directory and unsets
// KUBECONFIG for the rest of the test binary, so that a command a test
// runs without --data-dir or --kubeconfig finds nothing of the user's
// (~/.dnsplane, the KUBECONFIG the quick start has them export) and never
// reaches their running `up` (issue 21, item 5: the tests must not depend
// on the machine being idle). It returns the function that removes the
// directory.
func isolateFromMachine() (func(), error) {
	home, err := os.MkdirTemp("", "dnsplane-test-home-")
	if err != nil {
		return nil, fmt.Errorf("a home for the tests: %w", err)
	}
	if err := os.Setenv("HOME", home); err != nil {
		return nil, err
	}
	if err := os.Unsetenv("KUBECONFIG"); err != nil {
		return nil, err
	}
	return func() { _ = os.RemoveAll(home) }, nil
}

// TestDefaultsAreNotTheMachines: without --data-dir a command looks in the
// tests' own home, not in the data dir of the `up` the user may be running
// (a `dnsplane node list` there would list its nodes and exit 0).
func TestDefaultsAreNotTheMachines(t *testing.T) {
	t.Parallel()
	home := os.Getenv("HOME")
	if home == machineHome {
		t.Errorf("HOME is the machine's (%s): tests run commands against the user's ~/.dnsplane", home)
	}
	if v, ok := os.LookupEnv("KUBECONFIG"); ok {
		t.Errorf("KUBECONFIG=%s is set: commands without --kubeconfig would use it", v)
	}
	dir := filepath.Join(home, ".dnsplane")
	out, errOut, code := runCmd(t, "", "node", "list")
	want := "error: no dnsplane up is running with data dir " + dir + " "
	if code != exitUsage || out != "" || !strings.HasPrefix(errOut, want) {
		t.Errorf("node list without --data-dir: exit %d, stdout %q, stderr %q; want exit %d and %q…", code, out, errOut, exitUsage, want)
	}
}
