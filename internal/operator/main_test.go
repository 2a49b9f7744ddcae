package operator

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// dryLoadChildEnv makes this test binary the dry-load child, as
// `dnsplane corefile-check` is for the operator: the Corefile on standard
// input, CoreDNS's real setup (coredns.DryLoad), the same exit statuses.
const dryLoadChildEnv = "DNSPLANE_OPERATOR_TEST_DRYLOAD_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(dryLoadChildEnv) == "1" {
		os.Exit(dryLoadChild())
	}
	os.Exit(m.Run())
}

func dryLoadChild() int {
	text, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	err = coredns.DryLoad(context.Background(), string(text))
	switch {
	case err == nil:
		return 0
	case coredns.IsLoadError(err):
		fmt.Fprintln(os.Stderr, "error:", err)
		return ExitCorefileRejected
	default:
		fmt.Fprintln(os.Stderr, "error:", err)
		return 3
	}
}

// dryLoadChecker dry-loads in this test binary as a child process whose
// environment has nothing but the switch: no KUBERNETES_SERVICE_HOST, as
// for an operator run from a shell with --kubeconfig.
func dryLoadChecker(t *testing.T) ExecChecker {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ExecChecker{Path: self, Env: []string{dryLoadChildEnv + "=1"}}
}

// waitFor polls cond, which reads in-process state or asks the test's API
// server, failing the test after 30s with its last error.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	testkit.PollEvery(t, what, 20*time.Millisecond, 30*time.Second, func(context.Context) (bool, error) { return cond() })
}
