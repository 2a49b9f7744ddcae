package warmstack

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// lean is a handler that needs next to no stack, as template or a cache
// hit behind few plugins.
type lean struct{}

func (lean) Name() string { return "lean" }

func (lean) ServeDNS(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
	return dns.RcodeSuccess, nil
}

// measured is warmstack with the chooser setup gives it.
func measured(next plugin.Handler) *WarmStack {
	s := New(next, 16)
	s.choose = newChooser()
	return s
}

// serveOnNewGoroutines serves n queries through h, each on a new
// goroutine, as miekg/dns does.
func serveOnNewGoroutines(h plugin.Handler, n int) {
	w := &test.ResponseWriter{}
	q := query("example.org.")
	done := make(chan struct{})
	for range n {
		go func() {
			_, _ = h.ServeDNS(context.Background(), w, q)
			done <- struct{}{}
		}()
		<-done
	}
}

// The chooser serves the sample's windows alternately in place and handed
// off, and then the way whose windows cost less CPU, until the next
// sample.
func TestChooserTakesTheCheaperWay(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name               string
		inPlace, handedOff time.Duration // CPU per query
		wantHandOff        bool
		wantInPlace        int // queries served in place, of samplePeriod
	}{
		{"hand-off cheaper", 2 * time.Microsecond, time.Microsecond, true, sampleQueries / 2},
		{"in place cheaper", time.Microsecond, 2 * time.Microsecond, false, samplePeriod - sampleStart - sampleQueries/2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newChooser()
			var clock time.Duration
			c.cpuTime = func() (time.Duration, bool) { return clock, true }
			var decisions []bool
			c.decided = func(handOff bool, _, _ time.Duration) { decisions = append(decisions, handOff) }
			inPlace := 0
			for i := range samplePeriod {
				handOff := c.next()
				if i < sampleStart && !handOff {
					t.Fatalf("query %d in place before the first sample", i)
				}
				if w := (i - sampleStart) / windowQueries; i >= sampleStart && w < sampleWindows && handOff != handOffWindow[w] {
					t.Fatalf("query %d, in window %d of the sample: hands off %v", i, w, handOff)
				}
				if handOff {
					clock += tt.handedOff
				} else {
					clock += tt.inPlace
					inPlace++
				}
			}
			if len(decisions) != 1 || decisions[0] != tt.wantHandOff {
				t.Errorf("decisions %v, want [%v]", decisions, tt.wantHandOff)
			}
			if inPlace != tt.wantInPlace {
				t.Errorf("%d of %d queries in place, want %d", inPlace, samplePeriod, tt.wantInPlace)
			}
			// The next period starts the way decided; its sample starts
			// in place again.
			for range sampleStart {
				if c.next() != tt.wantHandOff {
					t.Fatal("the next period does not start the way decided")
				}
			}
			if c.next() {
				t.Error("the next sample does not start in place")
			}
		})
	}
}

// Without a CPU clock the chooser hands off, as warmstack did before it
// measured.
func TestChooserWithoutClockHandsOff(t *testing.T) {
	t.Parallel()
	c := newChooser()
	c.cpuTime = func() (time.Duration, bool) { return 0, false }
	for i := range 2 * windowQueries {
		if !c.next() {
			t.Fatalf("query %d in place without a CPU clock", i)
		}
	}
}

// A lean chain costs less in place (no hand-off, little growth): with the
// process's real CPU clock, the first sample chooses that. Not parallel:
// the clock is the whole process's.
func TestLeanChainRunsInPlace(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation, not the chain, decides what the two ways cost")
	}
	s := measured(lean{})
	var inPlace, handedOff time.Duration
	s.choose.decided = func(_ bool, in, off time.Duration) { inPlace, handedOff = in, off }
	if !s.HandsOff() {
		t.Fatal("a new warmstack runs queries in place before its first sample")
	}
	serveOnNewGoroutines(s, sampleStart+sampleQueries+1)
	if s.HandsOff() {
		t.Errorf("after the first sample a lean chain's queries are handed off: CPU time %v in place, %v handed off", inPlace, handedOff)
	}
}

// BenchmarkChain serves each query on a new goroutine, as miekg/dns does,
// directly, through warmstack always handing off (as it did before it
// measured) and through warmstack with its chooser, in front of a deep
// chain (every query grows its goroutine's stack without warmstack) and a
// lean one (the hand-off costs more than the growth it saves). "handsoff"
// is the chooser's last decision.
func BenchmarkChain(b *testing.B) {
	for _, chain := range []struct {
		name string
		h    plugin.Handler
	}{
		{"deep", deep{}},
		{"lean", lean{}},
	} {
		for _, bc := range []struct {
			name string
			h    plugin.Handler
		}{
			{"direct", chain.h},
			{"handoff", New(chain.h, 16)},
			{"warmstack", measured(chain.h)},
		} {
			b.Run(chain.name+"/"+bc.name, func(b *testing.B) {
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
				if ws, ok := bc.h.(*WarmStack); ok {
					handsOff := 0.0
					if ws.HandsOff() {
						handsOff = 1
					}
					b.ReportMetric(handsOff, "handsoff")
				}
			})
		}
	}
}

// Queries from many goroutines at once count and sample without a race
// (go test -race) and reach a decision.
func TestChooserConcurrentQueries(t *testing.T) {
	t.Parallel()
	s := measured(lean{})
	var decisions atomic.Int32
	s.choose.decided = func(bool, time.Duration, time.Duration) { decisions.Add(1) }
	const goroutines = 8
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range (sampleStart+sampleQueries)/goroutines + 1 {
				if rcode, err := s.ServeDNS(context.Background(), &test.ResponseWriter{}, query("a.")); rcode != dns.RcodeSuccess || err != nil {
					t.Errorf("query: %d, %v", rcode, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := decisions.Load(); n != 1 {
		t.Errorf("%d decisions after one sample's queries, want 1", n)
	}
}
