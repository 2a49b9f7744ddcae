package coredns

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// TestResourceExhausted: a setup that ran out of descriptors or memory is
// the process's failure, not the Corefile's, also through CoreDNS's
// plugin.Error wrapping and an *fs.PathError.
func TestResourceExhausted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("plugin/forward: %w", &fs.PathError{Op: "open", Path: "/ca.crt", Err: syscall.EMFILE}), true},
		{fmt.Errorf("plugin/tls: %w", syscall.ENFILE), true},
		{syscall.ENOMEM, true},
		{fmt.Errorf("plugin/forward: %w", &fs.PathError{Op: "open", Path: "/ca.crt", Err: syscall.ENOENT}), false},
		{errors.New("Corefile:2 - Error during parsing: Unknown directive 'policy'"), false},
	}
	for _, tt := range tests {
		if got := resourceExhausted(tt.err); got != tt.want {
			t.Errorf("resourceExhausted(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
