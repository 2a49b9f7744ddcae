package admission

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsListThePlugins: docs/apiserver.md prints the chain's order as
// plugins.go has it.
func TestDocsListThePlugins(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/apiserver.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- admission-plugins -->\n```\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/apiserver.md has no admission-plugins block")
	}
	documented := strings.Fields(string(m[1]))
	var names []string
	for _, p := range Plugins(Config{}) {
		names = append(names, p.Name)
	}
	if !slices.Equal(documented, names) {
		t.Errorf("docs/apiserver.md lists %q, plugins.go %q", documented, names)
	}
}

// TestChainLeavesOutUnconfigured: a plugin its configuration turns off is
// not in the chain, so a server without authorization or storage-backed
// reads runs the rest.
func TestChainLeavesOutUnconfigured(t *testing.T) {
	t.Parallel()
	got := New(Config{}).Names()
	want := []string{"ServiceAccount", "DefaultTolerationSeconds", "Certificates", "RBACEscalation"}
	if !slices.Equal(got, want) {
		t.Errorf("chain of an empty Config: %q, want %q", got, want)
	}
}
