package controlplane_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/controlplane"
)

// TestClaimDataDirMakesItPrivate: a data dir created beforehand with a
// umask's 0755 is made 0700 and the log says so; one already 0700 is left
// alone without a word (issue 29: a 0755 data dir stayed world-listable).
func TestClaimDataDirMakesItPrivate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode    os.FileMode
		wantLog string
	}{
		{0o755, "msg=\"data dir made owner-only\""},
		{0o700, ""},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, tt.mode); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		lock, err := controlplane.ClaimDataDir(dir, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("a %#o data dir is %v after ClaimDataDir (%v); want 0700", tt.mode, fi.Mode().Perm(), err)
		}
		if tt.wantLog == "" && logs.Len() > 0 || !strings.Contains(logs.String(), tt.wantLog) ||
			tt.wantLog != "" && !strings.Contains(logs.String(), "was=0755 now=0700") {
			t.Errorf("a %#o data dir: log %q; want %q", tt.mode, logs.String(), tt.wantLog)
		}
		if err := lock.Release(true); err != nil {
			t.Fatal(err)
		}
	}
}
