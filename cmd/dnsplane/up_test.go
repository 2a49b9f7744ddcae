package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// notifyingBuffer signals once what was written contains a marker.
type notifyingBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func (b *notifyingBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if strings.Contains(b.buf.String(), b.marker) {
		b.once.Do(func() { close(b.seen) })
	}
	return n, err
}

func (b *notifyingBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestUpServesAndStops runs the quick start's main command in-process: it
// must come up on the embedded etcd, write a kubeconfig, print how to use it,
// and shut down cleanly on cancellation (what SIGINT does).
func TestUpServesAndStops(t *testing.T) {
	dir := t.TempDir()
	out := &notifyingBuffer{marker: "kubectl --kubeconfig", seen: make(chan struct{})}
	var errOut bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"up", "--data-dir", dir, "--secure-port", "0", "--log-level", "warn"}, strings.NewReader(""), out, &errOut)
	}()
	select {
	case <-out.seen:
	case code := <-done:
		t.Fatalf("up exited early with %d: %s%s", code, out.String(), errOut.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("up did not come up: %s%s", out.String(), errOut.String())
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Errorf("no kubeconfig: %v", err)
	}
	if !strings.Contains(out.String(), "dnsplane is up\n  API server: https://127.0.0.1:") {
		t.Errorf("banner:\n%s", out.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after shutdown: %s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("up did not stop")
	}
}
