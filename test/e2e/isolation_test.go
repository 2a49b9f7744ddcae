package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// machineHome is HOME as the tests found it: the home of the user whose
// `dnsplane up` may be running on its defaults while the tests run.
var machineHome = os.Getenv("HOME")

// isolateFromMachine gives every command the tests run from here on an
// empty home under dir and no KUBECONFIG, so that one run without
// --data-dir or --kubeconfig never reaches the user's ~/.dnsplane or the
// up their exported KUBECONFIG names (issue 21, item 5: the tests must not
// depend on the machine being idle). Go's own directories and settings
// stay where they were: they derive from HOME, and a build with a cold
// cache would take minutes.
func isolateFromMachine(dir string) error {
	goDirs := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}
	out, err := exec.Command("go", append([]string{"env"}, goDirs...)...).Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i, name := range goDirs {
		if i < len(vals) && vals[i] != "" {
			if err := os.Setenv(name, vals[i]); err != nil {
				return err
			}
		}
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return fmt.Errorf("a home for the tests: %w", err)
	}
	if err := os.Setenv("HOME", home); err != nil {
		return err
	}
	return os.Unsetenv("KUBECONFIG")
}

// TestDefaultsAreNotTheMachines: a dnsplane command the tests run without
// --data-dir looks in the tests' own home, not in the data dir of the `up`
// the user may be running (`dnsplane node list` there lists its nodes and
// exits 0).
func TestDefaultsAreNotTheMachines(t *testing.T) {
	t.Parallel()
	home := os.Getenv("HOME")
	if home == machineHome {
		t.Errorf("HOME is the machine's (%s): commands without --data-dir use the user's ~/.dnsplane", home)
	}
	if v, ok := os.LookupEnv("KUBECONFIG"); ok {
		t.Errorf("KUBECONFIG=%s is set: commands without --kubeconfig use it", v)
	}
	dir := filepath.Join(home, ".dnsplane")
	out, errOut, code := runDnsplane(t, "node", "list")
	if want := "error: no dnsplane up is running with data dir " + dir + " "; code != 2 || out != "" || !strings.HasPrefix(errOut, want) {
		t.Errorf("node list without --data-dir: exit %d, stdout %q, stderr %q; want exit 2 and %q…", code, out, errOut, want)
	}
}
