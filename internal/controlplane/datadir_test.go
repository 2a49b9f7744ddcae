package controlplane_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/datadirlock"
)

// treeHash is every path under root with its mode and content: two equal
// hashes mean nothing was added, removed, changed or re-permissioned.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		h.Write([]byte(rel + "\x00" + fi.Mode().String() + "\x00"))
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		h.Write([]byte{0})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// servedDataDir is a data dir a control plane served and stopped in.
func servedDataDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	ts := controlplanetest.StartTestServer(t, controlplane.Config{DataDir: dir})
	if err := ts.Stop(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// overwrite puts garbage at offset of the first file under dir whose name
// ends with suffix.
func overwrite(t *testing.T, dir, suffix string, offset int64) string {
	t.Helper()
	var target string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, _ error) error {
		if target == "" && !d.IsDir() && strings.HasSuffix(path, suffix) {
			target = path
		}
		return nil
	})
	if target == "" {
		t.Fatalf("no *%s under %s", suffix, dir)
	}
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("garbage!", 512)), offset); err != nil {
		t.Fatal(err)
	}
	return target
}

// TestStartRefusesDataDir: a data dir that is a file, held by another
// process or damaged is refused with a message saying what to do, and
// nothing in it is modified. Unreadable is not tested: root, which the
// tests run as, reads any mode. (A damaged database is test/e2e's
// TestUpRefusesDamagedDataDir: bbolt panics on it, which only the etcd
// child process survives; a foreign kubeconfig is TestStartRefusesEarly.)
func TestStartRefusesDataDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup returns the --data-dir and the tree to hash.
		setup    func(t *testing.T) (dataDir, tree string)
		want     []string
		isConfig bool
	}{
		{"a file", func(t *testing.T) (string, string) {
			t.Helper()
			p := filepath.Join(t.TempDir(), "data")
			if err := os.WriteFile(p, []byte("notes"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p, filepath.Dir(p)
		}, []string{"--data-dir ", "/data is not a directory: choose another --data-dir"}, true},
		{"a path through a file", func(t *testing.T) (string, string) {
			t.Helper()
			p := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(p, []byte("notes"), 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(p, "data"), filepath.Dir(p)
		}, []string{"creating data dir (--data-dir): mkdir ", "/file: not a directory"}, false},
		{"someone else's files", func(t *testing.T) (string, string) {
			t.Helper()
			dir := t.TempDir()
			for _, name := range []string{"notes.txt", "go.mod"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Mkdir(filepath.Join(dir, "src"), 0o700); err != nil {
				t.Fatal(err)
			}
			return dir, dir
		}, []string{" holds files dnsplane did not write (go.mod, notes.txt, src) and none of its own: choose a new or empty --data-dir"}, true},
		{"held by another process", func(t *testing.T) (string, string) {
			t.Helper()
			dir := t.TempDir()
			l, err := datadirlock.Acquire(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Release(true) })
			return dir, dir
		}, []string{"is in use by ", "(pid " + strconv.Itoa(os.Getpid()) + "); stop it or choose another --data-dir"}, true},
		{"garbage in the write-ahead log", func(t *testing.T) (string, string) {
			t.Helper()
			dir := servedDataDir(t)
			overwrite(t, filepath.Join(dir, "etcd", "member", "wal"), ".wal", 0)
			return dir, dir
		}, []string{"/etcd is damaged: write-ahead log member/wal", "restore it from a backup"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dataDir, tree := tt.setup(t)
			before := treeHash(t, tree)
			cp, err := controlplane.Start(context.Background(), controlplane.Config{DataDir: dataDir})
			if err == nil {
				_ = cp.Stop()
				t.Fatal("Start succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Start: %v; want it to say %q", err, w)
				}
			}
			if _, ok := errors.AsType[*controlplane.ConfigError](err); ok != tt.isConfig {
				t.Errorf("ConfigError %v, want %v", ok, tt.isConfig)
			}
			if after := treeHash(t, tree); after != before {
				t.Errorf("the refused data dir was modified")
			}
		})
	}
}
