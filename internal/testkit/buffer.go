package testkit

import (
	"bytes"
	"sync"
)

// Buffer collects output written from other goroutines (a child process's
// copying goroutines, a server's error log) that the test reads meanwhile.
// The zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail is the last n bytes of what was written, marked when cut, for a
// failure message about a long-running child.
func (b *Buffer) Tail(n int) string {
	return Tail(b.String(), n)
}

// Tail is the last n bytes of s, marked with "…" when cut.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
