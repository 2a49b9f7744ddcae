package warmstack

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"
)

func query(name string) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	return m
}

func TestServeDNSPassesThrough(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	tests := []struct {
		name      string
		next      plugin.Handler
		wantRcode int
		wantErr   error
		wantReply bool
	}{
		{"answer", test.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = append(m.Answer, test.A("example.org. 30 IN A 192.0.2.1"))
			return dns.RcodeSuccess, w.WriteMsg(m)
		}), dns.RcodeSuccess, nil, true},
		{"rcode and error for the server to write", test.HandlerFunc(func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
			return dns.RcodeServerFailure, boom
		}), dns.RcodeServerFailure, boom, false},
		{"no next plugin", nil, dns.RcodeServerFailure, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New(tt.next, 2)
			for range 3 { // the first spawns a worker, the next ones reuse it
				rec := dnstest.NewRecorder(&test.ResponseWriter{})
				rcode, err := s.ServeDNS(context.Background(), rec, query("example.org."))
				if rcode != tt.wantRcode {
					t.Errorf("rcode = %d, want %d", rcode, tt.wantRcode)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
				if tt.next == nil && err == nil {
					t.Error("no error without a next plugin")
				}
				if got := rec.Msg != nil; got != tt.wantReply {
					t.Errorf("reply written = %v, want %v", got, tt.wantReply)
				}
			}
		})
	}
}

// A panic in the chain reaches the query's own goroutine, where CoreDNS's
// server recovers it; the worker lives on.
func TestPanicReachesCaller(t *testing.T) {
	t.Parallel()
	calls := 0
	s := New(test.HandlerFunc(func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
		calls++
		if calls == 1 {
			panic("plugin bug")
		}
		return dns.RcodeSuccess, nil
	}), 1)
	func() {
		defer func() {
			if p := recover(); p != "plugin bug" {
				t.Errorf("recovered %v, want the chain's panic", p)
			}
		}()
		_, _ = s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("a."))
		t.Error("ServeDNS returned after the chain panicked")
	}()
	if rcode, err := s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("b.")); rcode != dns.RcodeSuccess || err != nil {
		t.Errorf("after a panic: %d, %v", rcode, err)
	}
	if n := s.Running(); n != 1 {
		t.Errorf("%d workers after a panic, want 1", n)
	}
}

// With every worker busy (a query waiting on its upstream), the next query
// runs on its own goroutine instead of waiting behind it.
func TestFullPoolNeverQueues(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{})
	s := New(test.HandlerFunc(func(_ context.Context, _ dns.ResponseWriter, r *dns.Msg) (int, error) {
		if r.Question[0].Name == "slow." {
			close(started)
			<-release
		}
		return dns.RcodeSuccess, nil
	}), 1)
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		_, _ = s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("slow."))
	}()
	<-started
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("fast."))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a query waited behind the busy worker")
	}
	close(release)
	<-slowDone
}

// searchexpand asks the server again from inside the chain: nested
// queries take other workers or run inline, and never deadlock.
func TestReentrantQueries(t *testing.T) {
	t.Parallel()
	var s *WarmStack
	s = New(test.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		if depth := len(r.Question[0].Name); depth < 8 {
			return s.ServeDNS(ctx, w, query("a"+r.Question[0].Name))
		}
		return dns.RcodeSuccess, nil
	}), 2)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rcode, err := s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("a.")); rcode != dns.RcodeSuccess || err != nil {
				t.Errorf("nested query: %d, %v", rcode, err)
			}
		}()
	}
	wg.Wait()
	if n := s.Running(); n > 2 {
		t.Errorf("%d workers, want at most 2", n)
	}
}

func TestIdleWorkersExit(t *testing.T) {
	t.Parallel()
	s := New(test.HandlerFunc(func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
		return dns.RcodeSuccess, nil
	}), 4)
	s.IdleTimeout = 10 * time.Millisecond
	_, _ = s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("a."))
	if n := s.Running(); n != 1 {
		t.Fatalf("%d workers after a query, want 1", n)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return s.Running() == 0, nil
	})
	if err != nil {
		t.Fatalf("%d workers still running after their idle timeout", s.Running())
	}
	// A query after that starts a new one.
	if rcode, _ := s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("b.")); rcode != dns.RcodeSuccess {
		t.Errorf("rcode %d after the pool emptied", rcode)
	}
}

// deep is a handler whose frames need about 24 KiB of stack, as a chain of
// cache, kubernetes and forward does.
type deep struct{}

func (deep) Name() string { return "deep" }

func (deep) ServeDNS(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
	return recurse(12), nil
}

//go:noinline
func recurse(n int) int {
	var frame [2 << 10]byte
	frame[n] = byte(n)
	if n == 0 {
		return int(frame[0])
	}
	return recurse(n-1) + int(frame[n]) - n
}

// BenchmarkChain serves each query on a new goroutine, as miekg/dns does,
// with and without warmstack in front of a deep chain: without it every
// query grows its goroutine's stack.
func BenchmarkChain(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    plugin.Handler
	}{
		{"direct", deep{}},
		{"warmstack", New(deep{}, 16)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := &test.ResponseWriter{}
			q := query("example.org.")
			done := make(chan struct{})
			b.ReportAllocs()
			for b.Loop() {
				go func() {
					_, _ = bc.h.ServeDNS(context.Background(), w, q)
					done <- struct{}{}
				}()
				<-done
			}
		})
	}
}
