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

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
)

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
	limits := filters.DefaultLimits()
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
	// The server's own informers hold one connection (HTTP/2), as
	// kube-apiserver's loopback client does; it is counted.
	if err := run.waitInformers(ctx); err != nil {
		t.Fatal(err)
	}
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
	if len(held) != limit-1 || refused != extra+1 {
		t.Fatalf("%d connections served and %d refused, want %d and %d", len(held), refused, limit-1, extra+1)
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
