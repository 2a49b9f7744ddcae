//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on a file in dir for the life of the
// process (the kernel drops it if the process dies, so a crash never leaves it stale).
func lockDir(dir string) (unlock func() error, err error) {
	path := filepath.Join(dir, "dnsplane-etcd.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening etcd data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("etcd data dir %s is in use by another process", dir)
		}
		return nil, fmt.Errorf("locking etcd data dir %s: %w", dir, err)
	}
	return f.Close, nil
}
