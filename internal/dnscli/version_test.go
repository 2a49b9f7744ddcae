package dnscli

import (
	"os"
	"regexp"
	"testing"
)

// TestFallbackMatchesGoMod: the CoreDNS release a binary without module
// information reports is the one go.mod requires.
func TestFallbackMatchesGoMod(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+github\.com/coredns/coredns (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no github.com/coredns/coredns")
	}
	if got := string(m[1]); got != fallbackCoreDNS {
		t.Errorf("go.mod requires %s %s, fallbackCoreDNS is %s", corednsModule, got, fallbackCoreDNS)
	}
}
