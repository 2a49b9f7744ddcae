//go:build !unix

package storage

// lockDir is a no-op where flock is unavailable; etcd's own file locks remain.
func lockDir(string) (func() error, error) { return func() error { return nil }, nil }
