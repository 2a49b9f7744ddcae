package pki

import (
	"crypto/ecdsa"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsureServiceAccountKey: the key is made once and kept (the tokens it
// signed stay valid across restarts), owner-only; a file that is not a key
// is refused, never replaced.
func TestEnsureServiceAccountKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := EnsureServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EnsureServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !first.(*ecdsa.PrivateKey).Equal(again) {
		t.Error("a second start made a new key")
	}
	path := filepath.Join(dir, ServiceAccountKeyName)
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	for _, tc := range []struct{ name, content, want string }{
		{"not PEM", "hello", "no PEM block"},
		{"not a key", "-----BEGIN PRIVATE KEY-----\naGVsbG8=\n-----END PRIVATE KEY-----\n", "move it away"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := filepath.Join(dir, ServiceAccountKeyName)
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := EnsureServiceAccountKey(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.content {
				t.Error("the file was replaced")
			}
		})
	}
}
