package hostresolv

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPluginsLinkNoInternalPackages guards the reason this package exists:
// plugin/ is what someone building their own CoreDNS imports, and Go refuses
// an import of another module's internal/ package, so one internal/ import
// anywhere under plugin/ (even indirect) makes every plugin unbuildable
// outside this module. Test-only imports are allowed: they are not linked
// into a CoreDNS binary.
func TestPluginsLinkNoInternalPackages(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH; this test runs go list")
	}
	const module = "github.com/dnsplane/dnsplane"
	out, err := exec.Command(goTool, "list", "-deps", module+"/plugin/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s/plugin/...: %v\n%s", module, err, out)
	}
	deps := strings.Fields(string(out))
	for _, tt := range []struct {
		prefix, why string
	}{
		{module + "/internal/", "Go forbids importing another module's internal/ packages"},
		{module + "/cmd/", "commands are not libraries"},
	} {
		t.Run(strings.TrimPrefix(tt.prefix, module+"/"), func(t *testing.T) {
			for _, d := range deps {
				if strings.HasPrefix(d, tt.prefix) {
					t.Errorf("plugin/... links %s: %s (run go list -deps ./plugin/... to see the path)", d, tt.why)
				}
			}
		})
	}
	if !strings.Contains(string(out), module+"/plugin/pkg/hostresolv") {
		t.Errorf("go list -deps did not list this package; is the pattern still right?\n%s", out)
	}
}
