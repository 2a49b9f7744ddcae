package storage

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// populatedDataDir returns an etcd data dir with a few writes in it, written
// by a real embedded etcd and closed cleanly.
func populatedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	emb := startEmbedded(t, dir)
	client, err := Connect(testCtx(t), emb.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := New(client, "/registry")
	for i := range 20 {
		mustCreate(t, s, fmt.Sprintf("configmaps/ns/c%02d", i), strings.Repeat("x", 100))
	}
	client.Close()
	if err := emb.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newestWAL(t *testing.T, dir string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "member", "wal", "*.wal"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no WAL segment in %s (%v)", dir, err)
	}
	return names[len(names)-1]
}

// usedBytes is how much of a preallocated WAL segment holds records.
func usedBytes(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := len(data)
	for end > 0 && data[end-1] == 0 {
		end--
	}
	return int64(end)
}

func TestCheckDataDir(t *testing.T) {
	t.Parallel()
	base := populatedDataDir(t)
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		// wantPart is the damaged part named in the error; "" = no error.
		wantPart string
	}{
		{name: "intact", damage: func(*testing.T, string) {}},
		{name: "torn last record", damage: func(t *testing.T, dir string) {
			t.Helper()
			// A crash during a write leaves a partial record; etcd drops
			// it on start and so must we accept it.
			p := newestWAL(t, dir)
			if err := os.Truncate(p, usedBytes(t, p)-3); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "wal dir deleted", wantPart: "write-ahead log", damage: func(t *testing.T, dir string) {
			t.Helper()
			if err := os.RemoveAll(filepath.Join(dir, "member", "wal")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "newest segment emptied", wantPart: "write-ahead log", damage: func(t *testing.T, dir string) {
			t.Helper()
			if err := os.Truncate(newestWAL(t, dir), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "newest segment truncated", wantPart: "write-ahead log", damage: func(t *testing.T, dir string) {
			t.Helper()
			if err := os.Truncate(newestWAL(t, dir), 100); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "database header overwritten", wantPart: "database", damage: func(t *testing.T, dir string) {
			t.Helper()
			overwrite(t, filepath.Join(dir, "member", "snap", "db"), 0, 8192)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if out, err := exec.Command("cp", "-a", base+"/.", dir).CombinedOutput(); err != nil {
				t.Fatalf("copying the data dir: %v: %s", err, out)
			}
			tt.damage(t, dir)
			err := CheckDataDir(dir)
			if tt.wantPart == "" {
				if err != nil {
					t.Fatalf("CheckDataDir = %v, want nil", err)
				}
				return
			}
			var de *DamagedError
			if !errors.As(err, &de) {
				t.Fatalf("CheckDataDir = %v, want a *DamagedError", err)
			}
			if !strings.Contains(de.Part, tt.wantPart) || de.Dir != dir {
				t.Errorf("DamagedError{Dir: %q, Part: %q}, want dir %q and part %q", de.Dir, de.Part, dir, tt.wantPart)
			}
			for _, want := range []string{dir, "restore it from a backup"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestCheckDataDirFresh(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), t.TempDir()} {
		if err := CheckDataDir(dir); err != nil {
			t.Errorf("CheckDataDir(%s) = %v, want nil", dir, err)
		}
	}
}

// overwrite fills n bytes of path at off with a pattern no valid page has.
func overwrite(t *testing.T, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte(strings.Repeat("\xde\xad\xbe\xef", int(n/4)))
	if _, err := f.WriteAt(junk, off); err != nil {
		t.Fatal(err)
	}
}
