// Package warmstack serves each query on a goroutine whose stack is already
// as deep as the plugin chain needs.
//
// miekg/dns starts a new goroutine for every UDP query, with the runtime's
// starting stack size (a few KiB: the average stack in use when the
// garbage collector last looked, and the server's idle goroutines pull it
// down). The plugin chain of a cluster DNS is deeper than that, so each
// query grows its stack two or three times, and every growth copies the
// stack and walks its frames through the function tables: a CPU profile of
// CoreDNS serving cached answers spends 15–20 % of its time in
// runtime.newstack (docs/autopath.md, "What a query costs"). warmstack
// hands the rest of the chain to a small pool of long-lived workers whose
// stacks have grown once and are kept from shrinking, and waits for the
// answer; when every worker is busy (queries waiting on an upstream) the
// query runs on its own goroutine as before, so the pool never queues a
// query behind another.
//
// The hand-off has a cost of its own, which a lean chain does not earn
// back, so warmstack measures which way a Corefile's queries cost less CPU
// and serves them that way (see chooser).
package warmstack

import (
	"context"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

const pluginName = "warmstack"

// DefaultWorkers bounds the pool per GOMAXPROCS, with MinWorkers at least.
// Queries answered from the cache take a few microseconds, so a handful of
// workers per core serve them all; the bound caps what idle workers keep
// (each holds a stack of four times keepStack or more) after queries
// waiting on upstreams occupied many at once.
const (
	DefaultWorkers = 4
	MinWorkers     = 16
	MaxWorkers     = 1024
)

// LeanChain is the most handlers after warmstack for which setup leaves
// warmstack out of the chain. Behind so few plugins (template, cache,
// forward) a cached query's goroutine may never grow its stack at all,
// and then any frame more, warmstack's own included, costs a growth on
// every query. bench/nodecache.sh, CPU per cached query: 12.9 µs without
// warmstack, 1.08× that when it always handed off, 15–17 µs through it in
// place; errors added instead (4 handlers) 20.2 µs, and 15.5 µs with
// warmstack handing off. The node cache's chain has 5 or 6 handlers, the
// DNS operator's more.
const LeanChain = 3

// DefaultIdleTimeout is how long a worker with nothing to do lives on.
const DefaultIdleTimeout = 30 * time.Second

// keepStack is the stack a worker commits before it waits for work. The
// runtime halves a goroutine's stack at a collection when it uses less
// than a quarter of it; a worker idling in its loop with this much in use
// keeps a stack of at least four times as much, enough for the deepest
// chain we render (searchexpand re-entering the server, then forward),
// which therefore never grows it again.
const keepStack = 8 << 10

// WarmStack is the plugin handler.
type WarmStack struct {
	Next plugin.Handler
	// Workers bounds the pool; IdleTimeout is how long an idle worker
	// stays. Set them before the first query.
	Workers     int
	IdleTimeout time.Duration

	work chan *job // unbuffered: a send succeeds only when a worker waits

	mu      sync.Mutex
	running int

	// choose says whether to hand a query off; nil always does (tests of
	// the pool).
	choose *chooser
}

type job struct {
	ctx   context.Context
	w     dns.ResponseWriter
	r     *dns.Msg
	rcode int
	err   error
	// panicked is what the chain panicked with, re-raised on the query's
	// own goroutine, where CoreDNS's server recovers it (a panic on a
	// worker would stop the process).
	panicked any
	done     chan struct{}
}

var jobs = sync.Pool{New: func() any { return &job{done: make(chan struct{}, 1)} }}

// New returns a WarmStack with at most workers workers in front of next.
func New(next plugin.Handler, workers int) *WarmStack {
	return &WarmStack{Next: next, Workers: workers, IdleTimeout: DefaultIdleTimeout, work: make(chan *job)}
}

// Name implements plugin.Handler.
func (s *WarmStack) Name() string { return pluginName }

// ServeDNS implements plugin.Handler.
//
// In place, it adds as little stack as it can to the chain's: its own
// small frame and nothing else (not even plugin.NextOrFailure's), since a
// few hundred bytes more can cost every query a growth of its stack.
func (s *WarmStack) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if s.Next != nil && s.choose != nil && !s.choose.next() {
		return s.Next.ServeDNS(ctx, w, r)
	}
	return s.serveOnWorker(ctx, w, r)
}

// serveOnWorker runs the rest of the chain on a worker and waits for it,
// or runs it in place when every worker is busy.
//
//go:noinline
func (s *WarmStack) serveOnWorker(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	j := jobs.Get().(*job)
	j.ctx, j.w, j.r = ctx, w, r
	select {
	case s.work <- j:
	default:
		if !s.spawn(j) {
			jobs.Put(j)
			return plugin.NextOrFailure(pluginName, s.Next, ctx, w, r)
		}
	}
	<-j.done
	rcode, err, panicked := j.rcode, j.err, j.panicked
	*j = job{done: j.done}
	jobs.Put(j)
	if panicked != nil {
		panic(panicked)
	}
	return rcode, err
}

// spawn starts a worker with j as its first job, unless the pool is full.
func (s *WarmStack) spawn(j *job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running >= s.Workers {
		return false
	}
	s.running++
	go s.worker(j)
	return true
}

func (s *WarmStack) worker(j *job) {
	var pad [keepStack]byte
	commit(&pad)
	idle := time.NewTimer(s.IdleTimeout)
	defer idle.Stop()
	for {
		s.serve(j)
		idle.Reset(s.IdleTimeout)
		select {
		case j = <-s.work:
		case <-idle.C:
			s.mu.Lock()
			s.running--
			s.mu.Unlock()
			return
		}
	}
}

// serve runs the rest of the chain for j and tells its caller, also when
// the chain panics.
func (s *WarmStack) serve(j *job) {
	defer func() {
		if p := recover(); p != nil {
			j.panicked = p
		}
		j.done <- struct{}{}
	}()
	j.rcode, j.err = plugin.NextOrFailure(pluginName, s.Next, j.ctx, j.w, j.r)
}

// HandsOff reports whether queries are handed to the workers now.
func (s *WarmStack) HandsOff() bool { return s.choose == nil || s.choose.handOff.Load() }

// Running is the number of workers, for tests and metrics.
func (s *WarmStack) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// commit writes to the worker's pad so that the frame holding it stays on
// the stack (it does not escape: the pointer goes nowhere).
//
//go:noinline
func commit(pad *[keepStack]byte) { pad[0], pad[keepStack-1] = 1, 1 }
