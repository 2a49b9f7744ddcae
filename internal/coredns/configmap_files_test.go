package coredns

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfigMapWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	if err := writeFiles(dir, map[string]string{"ca-a.crt": "A", "ca-b.crt": "B"}); err != nil {
		t.Fatal(err)
	}
	if err := writeFiles(dir, map[string]string{"ca-a.crt": "A2", "../x": "no"}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "ca-a.crt" {
		t.Fatalf("files = %v, want ca-a.crt alone", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ca-a.crt")); string(b) != "A2" {
		t.Errorf("ca-a.crt = %q, want A2", b)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "x")); err == nil {
		t.Error("a key naming another directory was written")
	}
}
