package apiserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestAutoMaxConnections(t *testing.T) {
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
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	ln, err := newConnLimitListener(inner, 2, reg, discardLogger())
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after 10s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServerConnectionLimit runs a real server with a connection limit of
// 20 and a short idle timeout, and floods it the way the issue did: one
// unauthenticated GET /healthz per TLS connection, kept open.
func TestServerConnectionLimit(t *testing.T) {
	const (
		limit = 20
		extra = 50
		idle  = 700 * time.Millisecond
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	limits := DefaultLimits()
	limits.MaxConnections, limits.IdleTimeout = limit, idle
	run, err := startRunning(ctx, t.TempDir(), Config{Limits: &limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := run.Stop(ctx); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := rest.TLSConfigFor(rest.AnonymousClientConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	addr := strings.TrimPrefix(run.URL, "https://")

	var held []*tls.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	refused := 0
	for range limit + extra {
		c, err := healthzConn(addr, tlsConfig)
		if err != nil {
			refused++
			continue
		}
		held = append(held, c)
	}
	if len(held) != limit || refused != extra {
		t.Fatalf("%d connections served and %d refused, want %d and %d", len(held), refused, limit, extra)
	}

	// Releasing the held connections frees their slots.
	for _, c := range held {
		c.Close()
	}
	held = nil
	eventuallyConn(t, func() error {
		c, err := healthzConn(addr, tlsConfig)
		if err == nil {
			c.Close()
		}
		return err
	})

	// The server closes a connection that stays idle.
	c, err := healthzConn(addr, tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	waited := time.Since(start)
	if n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("reading an idle connection: %d bytes, %v; want the server to close it", n, err)
	}
	if waited < idle/2 || waited > idle+5*time.Second {
		t.Errorf("the server closed the idle connection after %v, want about %v", waited, idle)
	}
}

// healthzConn opens a TLS connection, sends GET /healthz without
// credentials and returns the connection, open, once the answer is "ok".
func healthzConn(addr string, tlsConfig *tls.Config) (*tls.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, tlsConfig)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "ok" {
		c.Close()
		return nil, fmt.Errorf("GET /healthz: %d %q %w", resp.StatusCode, body, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}
