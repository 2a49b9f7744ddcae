package version

import (
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// The fallback is what go.mod requires, so a binary without module
// information does not report a release it does not link.
func TestFallbackMatchesGoMod(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+k8s\.io/kubernetes (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/kubernetes")
	}
	if got := string(m[1]); got != fallbackKubernetes {
		t.Errorf("go.mod requires k8s.io/kubernetes %s, fallbackKubernetes is %s", got, fallbackKubernetes)
	}
	if got := Kubernetes(); got != fallbackKubernetes {
		t.Errorf("Kubernetes() = %s in the test binary, want go.mod's %s", got, fallbackKubernetes)
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	info := Info()
	k := strings.TrimPrefix(fallbackKubernetes, "v")
	parts := strings.Split(k, ".")
	if info.Major != parts[0] || info.Minor != parts[1] {
		t.Errorf("major.minor = %s.%s, want %s.%s", info.Major, info.Minor, parts[0], parts[1])
	}
	if want := fallbackKubernetes + "+dnsplane"; info.GitVersion != want {
		t.Errorf("gitVersion = %q, want %q", info.GitVersion, want)
	}
}

func TestDevelVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"no vcs", nil, Base + "-dev"},
		{"clean", []debug.BuildSetting{{Key: "vcs.revision", Value: "6e3794e0123456789abc"}, {Key: "vcs.modified", Value: "false"}}, Base + "-dev+6e3794e01234"},
		{"dirty", []debug.BuildSetting{{Key: "vcs.revision", Value: "6e3794e0123456789abc"}, {Key: "vcs.modified", Value: "true"}}, Base + "-dev+6e3794e01234.dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := develVersion(tc.settings); got != tc.want {
				t.Errorf("develVersion = %q, want %q", got, tc.want)
			}
		})
	}
}
