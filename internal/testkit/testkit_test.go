package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestUntil(t *testing.T) {
	t.Parallel()
	errNotYet := errors.New("pod not bound")
	tests := []struct {
		name string
		// cond is built per run: the n-th call (from 1) answers.
		answer  func(ctx context.Context, n int) (bool, error)
		wantErr []string // substrings; nil means success
	}{
		{"holds at once", func(context.Context, int) (bool, error) { return true, nil }, nil},
		{"holds on the third try despite errors", func(_ context.Context, n int) (bool, error) { return n >= 3, errNotYet }, nil},
		{"never holds: the last error is reported", func(_ context.Context, n int) (bool, error) {
			return false, fmt.Errorf("try %d: %w", n, errNotYet)
		}, []string{"not within 300ms", "last error: try ", "pod not bound"}},
		{"an error then no error: the last state is reported", func(_ context.Context, n int) (bool, error) {
			if n == 1 {
				return false, errNotYet
			}
			return false, nil
		}, []string{"not within 300ms", "the last without an error"}},
		{"the deadline does not replace the condition's error", func(ctx context.Context, n int) (bool, error) {
			if n == 1 {
				return false, errNotYet
			}
			<-ctx.Done() // a request that blocks until the poll gives up
			return false, ctx.Err()
		}, []string{"last error: pod not bound"}},
		{"nor does a rate limiter refusing to wait past it", func(_ context.Context, n int) (bool, error) {
			if n == 1 {
				return false, errNotYet
			}
			return false, errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")
		}, []string{"last error: pod not bound"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			err := Until(t.Context(), 10*time.Millisecond, 300*time.Millisecond, func(ctx context.Context) (bool, error) {
				n++
				return tt.answer(ctx, n)
			})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Until: %v, want success", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Until succeeded, want a failure")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Until: %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestPollSucceeds(t *testing.T) {
	t.Parallel()
	start := time.Now()
	Poll(t, "a condition that holds at once", time.Minute, func(context.Context) (bool, error) { return true, nil })
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Poll took %v for a condition that holds at once", d)
	}
}

func TestFreeUDPTCPPort(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", LoopbackAddr(t)} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			port := FreeUDPTCPPort(t, host)
			addr := net.JoinHostPort(host, fmt.Sprint(port))
			assertBinds(t, addr)
		})
	}
}

func TestFreePort(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", FreePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}

func TestLoopbackAddr(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 10 {
		a := LoopbackAddr(t)
		ip := net.ParseIP(a).To4()
		if ip == nil || ip[0] != 127 {
			t.Fatalf("LoopbackAddr = %q, not in 127.0.0.0/8", a)
		}
		if a != "127.0.0.1" && ip[1] == 0 {
			t.Errorf("LoopbackAddr = %q, in 127.0.0.0/16 where fixed test addresses live", a)
		}
		seen[a] = true
	}
	if len(seen) < 2 && !seen["127.0.0.1"] {
		t.Errorf("10 LoopbackAddr calls gave %v: not random", seen)
	}
}

// TestFreeUDPTCPAddrParallel: addresses handed to parallel tests are
// distinct and each can be served over both transports.
func TestFreeUDPTCPAddrParallel(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			addr := FreeUDPTCPAddr(t)
			mu.Lock()
			dup := seen[addr]
			seen[addr] = true
			mu.Unlock()
			if dup {
				t.Errorf("%s handed out twice", addr)
			}
			assertBinds(t, addr)
		})
	}
}

func assertBinds(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("TCP on %s: %v", addr, err)
	}
	defer l.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("UDP on %s: %v", addr, err)
	}
	pc.Close()
}

func TestMetricValues(t *testing.T) {
	t.Parallel()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: "h"}, []string{"server"})
	c.WithLabelValues("a").Add(3)
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g", Help: "h"})
	g.Set(7)
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"counter child", CounterValue(t, c.WithLabelValues("a")), 3},
		{"untouched counter child", CounterValue(t, c.WithLabelValues("b")), 0},
		{"gauge", GaugeValue(t, g), 7},
		{"a gauge read as a counter", CounterValue(t, g), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestBuffer(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := len(b.String()); got != 400 {
		t.Errorf("%d bytes, want 400", got)
	}
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"a long output", 6, "…output"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := Tail(tt.s, tt.n); got != tt.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestSelf(t *testing.T) {
	t.Parallel()
	got := Self()
	if want := fmt.Sprintf(", pid %d", os.Getpid()); !strings.HasSuffix(got, want) || len(got) == len(want) {
		t.Errorf("Self() = %q, want a name and %q", got, want)
	}
	if !strings.HasPrefix(got, "testkit.test") {
		t.Errorf("Self() = %q, want the test binary's name first", got)
	}
}

// TestPollInCleanup: a cleanup can poll, although the test's context is
// done by then.
func TestPollInCleanup(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() {
		Poll(t, "a condition polled in a cleanup", 10*time.Second, func(ctx context.Context) (bool, error) {
			return ctx.Err() == nil, ctx.Err()
		})
	})
}
