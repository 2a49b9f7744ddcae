package filters

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestAutoMaxConnections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		nofile uint64
		want   int
	}{
		{200, 72},    // 200 - 128
		{256, 128},   // 256 - 128
		{512, 384},   // 512 - 128
		{1024, 768},  // 1024 - 256
		{4096, 3072}, // 4096 - 1024
		{20000, 15000},
		{1 << 20, 3 << 18},
		{170, 42},                            // a quarter: 170 - 128 would leave less
		{100, 25},                            // a quarter
		{3, 1},                               // at least one
		{0, 1},                               // nonsense in, still one
		{1 << 63, (1<<31 - 1) - (1<<31-1)/4}, // RLIM_INFINITY
	}
	for _, tt := range tests {
		if got := AutoMaxConnections(tt.nofile); got != tt.want {
			t.Errorf("AutoMaxConnections(%d) = %d, want %d", tt.nofile, got, tt.want)
		}
	}
}

// TestConnLimitListener checks the listener on plain TCP: connections over
// the limit are reset at once, a closed connection frees its slot, and the
// metrics count both.
func TestConnLimitListener(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	ln, err := newConnLimitListener(inner, 2, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The server side echoes one line per connection and keeps it open.
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
			go func() { _, _ = io.Copy(c, c) }()
		}
	}()
	echo := func() (net.Conn, error) {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		if err != nil {
			return nil, err
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ping\n")); err != nil {
			c.Close()
			return nil, err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "ping\n" {
			c.Close()
			return nil, fmt.Errorf("echo: %q, %w", line, err)
		}
		return c, nil
	}
	first, err := echo()
	if err != nil {
		t.Fatal(err)
	}
	second, err := echo()
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if c, err := echo(); err == nil {
		c.Close()
		t.Fatal("a third connection was served with a limit of 2")
	}
	first.Close()
	// The server notices the close when its read ends; close its side too,
	// as the HTTP server does.
	(<-accepted).Close()
	eventuallyConn(t, func() error {
		c, err := echo()
		if err == nil {
			c.Close()
		}
		return err
	})
	if got := metricValue(t, ln.rejected); got < 1 {
		t.Errorf("dnsplane_apiserver_rejected_connections_total = %v, want at least 1", got)
	}
}

// eventuallyConn retries f for a few seconds until it succeeds.
func eventuallyConn(t *testing.T, f func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		last = f()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("still failing after 10s: %v", last)
	}
}
