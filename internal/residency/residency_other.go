//go:build !linux

package residency

func releaseExecutable() (Report, error) { return Report{}, nil }

func vmRSS() int64 { return 0 }
