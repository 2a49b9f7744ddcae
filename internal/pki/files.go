package pki

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data so that a crash never leaves a
// truncated certificate or key behind: the data goes to a temporary file in
// the same directory, is synced, and is renamed over path.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// Set the mode before any secret is written, and explicitly, because the
	// umask must not widen or narrow what the caller asked for.
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Persist the rename itself; without this a power loss can bring back
	// the old directory entry even though the file data was synced.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// restrictMode makes an existing secret file owner-only. Files written by
// other tools (or restored from a backup) may be group- or world-readable,
// and the content is kept, so only the mode is corrected.
func restrictMode(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("check mode of %s: %w", path, err)
	}
	if info.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, info.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("restrict mode of %s: %w", path, err)
	}
	return nil
}
