package controllers

import (
	"os"
	"regexp"
	"testing"
)

// TestDocsListEveryController: docs/controllers.md's table has a row for
// every descriptor, saying runs or disabled as the binary does, so the
// page cannot drift from the code.
func TestDocsListEveryController(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/controllers.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (runs|disabled) \\|").FindAllStringSubmatch(string(doc), -1) {
		rows[m[1]] = m[2]
	}
	for _, d := range Descriptors() {
		want := "runs"
		if d.Disabled != "" {
			want = "disabled"
		}
		if got, ok := rows[d.Name]; !ok {
			t.Errorf("docs/controllers.md has no row for %s", d.Name)
		} else if got != want {
			t.Errorf("docs/controllers.md says %s %s; the binary: %s", d.Name, got, want)
		}
		delete(rows, d.Name)
	}
	for name := range rows {
		t.Errorf("docs/controllers.md lists %s, which is not a descriptor", name)
	}
}
