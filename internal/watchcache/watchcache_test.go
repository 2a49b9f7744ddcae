package watchcache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// fakeSource is an in-memory storage: a log of events that every watch
// replays from its revision, then follows.
type fakeSource struct {
	mu        sync.Mutex
	log       []storage.Event
	rev       int64
	compacted int64
	watches   []*fakeWatch
	froms     []int64
}

type fakeWatch struct {
	ch   chan storage.Event
	stop chan struct{}
	once sync.Once
	err  error
}

func (w *fakeWatch) Events() <-chan storage.Event { return w.ch }
func (w *fakeWatch) Err() error                   { return w.err }
func (w *fakeWatch) Stop()                        { w.once.Do(func() { close(w.stop) }) }

func (f *fakeSource) Watch(ctx context.Context, _ string, from int64) (storage.Watch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWatch{ch: make(chan storage.Event, 100000), stop: make(chan struct{})}
	f.froms = append(f.froms, from)
	if from < f.compacted {
		w.err = fmt.Errorf("from %d: %w", from, storage.ErrCompacted)
		close(w.ch)
		return w, nil
	}
	for _, ev := range f.log {
		if ev.KV.ModRevision > from {
			w.ch <- ev
		}
	}
	f.watches = append(f.watches, w)
	go func() {
		select {
		case <-ctx.Done():
		case <-w.stop:
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, o := range f.watches {
			if o == w {
				f.watches = append(f.watches[:i], f.watches[i+1:]...)
				close(w.ch)
				return
			}
		}
	}()
	return w, nil
}

func (f *fakeSource) CurrentRevision(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rev, nil
}

// put writes key with value "node|payload"; prev "" is a create.
func (f *fakeSource) put(key, value, prev string) int64 {
	typ := storage.Modified
	if prev == "" {
		typ = storage.Added
	}
	return f.emit(typ, key, value, prev)
}

func (f *fakeSource) del(key, prev string) int64 { return f.emit(storage.Deleted, key, prev, prev) }

func (f *fakeSource) emit(typ storage.EventType, key, value, prev string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rev++
	ev := storage.Event{Type: typ, KV: storage.KV{Key: key, Value: []byte(value), ModRevision: f.rev}}
	if prev != "" {
		ev.PrevValue = []byte(prev)
	}
	f.log = append(f.log, ev)
	for _, w := range f.watches {
		w.ch <- ev
	}
	return f.rev
}

// failAll ends every open watch with err, as etcd compacting under it would.
func (f *fakeSource) failAll(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.watches {
		w.err = err
		close(w.ch)
	}
	f.watches = nil
}

type obj struct{ node, val string }

type env struct {
	src     *fakeSource
	cache   *Cache
	watches atomic.Int64
	closed  atomic.Int64
	decodes atomic.Int64
	ctx     context.Context
}

func newEnv(t *testing.T, capacity, buffer int) *env {
	t.Helper()
	e := &env{src: &fakeSource{}, ctx: t.Context()}
	c, err := New(Config{
		Source: e.src, Prefix: "/pods/", Capacity: capacity, WatcherBuffer: buffer,
		Decode: func(kv storage.KV) (any, error) {
			e.decodes.Add(1)
			node, val, ok := strings.Cut(string(kv.Value), "|")
			if !ok {
				return nil, fmt.Errorf("bad value %q", kv.Value)
			}
			return &obj{node, val}, nil
		},
		Index:          func(o any) string { return o.(*obj).node },
		OnStorageWatch: func() { e.watches.Add(1) },
		OnTerminated:   func() { e.closed.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.cache = c
	t.Cleanup(c.Stop)
	return e
}

func (e *env) watch(t *testing.T, from int64, opts Options) *Watcher {
	t.Helper()
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = "/pods/"
	}
	w, err := e.cache.Watch(e.ctx, from, opts)
	if err != nil {
		t.Fatalf("Watch(%d, %+v): %v", from, opts, err)
	}
	t.Cleanup(w.Stop)
	return w
}

// next returns the next event of w or fails after 5 s.
func next(t *testing.T, w *Watcher) *Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatalf("watcher closed: %v", w.Err())
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event in 5s")
	}
	return nil
}

func revisions(evs []*Event) []int64 {
	out := make([]int64, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.Revision)
	}
	return out
}

// waitFor polls cond, in-process state, for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.PollEvery(t, what, 5*time.Millisecond, 5*time.Second, func(context.Context) (bool, error) { return cond(), nil })
}

// Many watchers share one storage watch and one decode per value, and an
// indexed watcher gets only its node's events.
func TestFanOutOneStorageWatch(t *testing.T) {
	t.Parallel()
	// The unindexed watcher is read last: room for every event.
	e := newEnv(t, 0, 1000)
	const nodes = 200
	ws := make([]*Watcher, nodes)
	for i := range ws {
		ws[i] = e.watch(t, 0, Options{Indexed: true, IndexValue: fmt.Sprintf("node-%d", i)})
	}
	all := e.watch(t, 0, Options{})
	ns := e.watch(t, 0, Options{KeyPrefix: "/pods/other/"})
	for i := range nodes {
		e.src.put(fmt.Sprintf("/pods/default/p%d", i), fmt.Sprintf("node-%d|v", i), "")
	}
	for i, w := range ws {
		ev := next(t, w)
		if want := fmt.Sprintf("/pods/default/p%d", i); ev.Key != want {
			t.Fatalf("node-%d watcher got %s, want %s", i, ev.Key, want)
		}
		if len(w.Events()) != 0 {
			t.Fatalf("node-%d watcher has %d more events, want none", i, len(w.Events()))
		}
	}
	for range nodes {
		next(t, all)
	}
	if n := len(ns.Events()); n != 0 {
		t.Errorf("watcher of another namespace got %d events", n)
	}
	if got := e.watches.Load(); got != 1 {
		t.Errorf("storage watches = %d, want 1 for %d watchers", got, nodes+2)
	}
	if got := e.decodes.Load(); got != nodes {
		t.Errorf("decodes = %d, want %d (one per event)", got, nodes)
	}
}

// An object moving from one index value to another reaches the watchers of
// both, so the old node's watcher can send DELETED.
func TestIndexedWatcherSeesObjectLeave(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	a := e.watch(t, 0, Options{Indexed: true, IndexValue: "a"})
	b := e.watch(t, 0, Options{Indexed: true, IndexValue: "b"})
	c := e.watch(t, 0, Options{Indexed: true, IndexValue: "c"})
	e.src.put("/pods/ns/p", "a|1", "")
	e.src.put("/pods/ns/p", "b|2", "a|1")
	e.src.del("/pods/ns/p", "b|2")
	if got := []storage.EventType{next(t, a).Type, next(t, a).Type}; got[0] != storage.Added || got[1] != storage.Modified {
		t.Errorf("a got %v, want ADDED, MODIFIED (the move)", got)
	}
	ev := next(t, b)
	prev, _ := ev.PrevObject()
	if ev.Type != storage.Modified || prev.(*obj).node != "a" {
		t.Errorf("b got %v with previous %+v, want the move from a", ev.Type, prev)
	}
	if ev := next(t, b); ev.Type != storage.Deleted {
		t.Errorf("b got %v, want DELETED", ev.Type)
	}
	if n := len(c.Events()); n != 0 {
		t.Errorf("c got %d events, want none", n)
	}
}

// A watcher that takes nothing is closed once its buffer is full and the
// budget spent; the others get every event meanwhile.
func TestSlowWatcherClosedOthersServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 4)
	slow := e.watch(t, 0, Options{})
	fast := e.watch(t, 0, Options{})
	const n = 50
	got := make(chan int, 1)
	go func() {
		c := 0
		for range fast.Events() {
			if c++; c == n {
				break
			}
		}
		got <- c
	}()
	for i := range n {
		e.src.put(fmt.Sprintf("/pods/ns/p%d", i), "x|v", "")
	}
	select {
	case c := <-got:
		if c != n {
			t.Fatalf("fast watcher got %d events, want %d", c, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fast watcher stalled behind the slow one")
	}
	waitFor(t, "the slow watcher to be closed", func() bool { return e.closed.Load() == 1 })
	drained := 0
	for range slow.Events() {
		drained++
	}
	if drained != 4 {
		t.Errorf("slow watcher had %d buffered, want 4", drained)
	}
	if err := slow.Err(); !errors.Is(err, storage.ErrWatchTooSlow) || errors.Is(err, storage.ErrCompacted) {
		t.Errorf("slow watcher err = %v, want ErrWatchTooSlow (not compacted: kube just closes it)", err)
	}
}

// A watch resumes from any revision the ring still covers and gets 410
// (TooOldError, matching ErrCompacted) for an older one.
func TestResumeFromRingAndTooOld(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4, 0)
	first := e.watch(t, 0, Options{})
	var revs []int64
	for i := range 10 {
		revs = append(revs, e.src.put(fmt.Sprintf("/pods/ns/p%d", i), "x|v", ""))
	}
	for range revs {
		next(t, first)
	}
	// The ring holds revisions 7..10, so it resumes from 6 on.
	w := e.watch(t, 6, Options{})
	if got := revisions(w.Backlog()); fmt.Sprint(got) != "[7 8 9 10]" {
		t.Errorf("backlog from 6 = %v, want [7 8 9 10]", got)
	}
	e.src.put("/pods/ns/late", "x|v", "")
	if ev := next(t, w); ev.Revision != 11 {
		t.Errorf("next after the backlog = %d, want 11", ev.Revision)
	}
	_, err := e.cache.Watch(e.ctx, 5, Options{KeyPrefix: "/pods/"})
	var tooOld *TooOldError
	if !errors.As(err, &tooOld) || !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("Watch(5) err = %v, want a TooOldError matching ErrCompacted", err)
	}
	if tooOld.Error() != "too old resource version: 5 (7)" {
		t.Errorf("message %q, want kube cacher's %q", tooOld.Error(), "too old resource version: 5 (7)")
	}
	if got := e.watches.Load(); got != 1 {
		t.Errorf("storage watches = %d, want 1", got)
	}
}

// With no watcher left the storage watch keeps running, as kube's cacher
// does, so a client reconnecting later resumes from the ring, and no event
// is decoded for nobody.
func TestResumeAfterAllWatchersLeft(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	w := e.watch(t, 0, Options{})
	r1 := e.src.put("/pods/ns/a", "x|1", "")
	next(t, w)
	w.Stop()
	waitFor(t, "the watcher to leave", func() bool { return e.cache.Watchers() == 0 })
	decoded := e.decodes.Load()
	r2 := e.src.put("/pods/ns/b", "x|2", "")
	waitFor(t, "the cache to take the event", func() bool {
		e.cache.mu.Lock()
		defer e.cache.mu.Unlock()
		return e.cache.latest == r2
	})
	if got := e.decodes.Load(); got != decoded {
		t.Errorf("decodes with no watcher = %d, want %d", got, decoded)
	}
	w2 := e.watch(t, r1, Options{})
	if got := revisions(w2.Backlog()); fmt.Sprint(got) != fmt.Sprint([]int64{r2}) {
		t.Errorf("backlog from %d = %v, want [%d]", r1, got, r2)
	}
	if got := e.watches.Load(); got != 1 {
		t.Errorf("storage watches = %d, want 1", got)
	}
}

// Stop ends the storage watch and closes the watchers without an error.
func TestStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	w := e.watch(t, 0, Options{})
	e.cache.Stop()
	if _, ok := <-w.Events(); ok {
		t.Fatal("watcher open after Stop")
	}
	if err := w.Err(); err != nil {
		t.Errorf("err = %v, want nil", err)
	}
	waitFor(t, "the storage watch to end", func() bool {
		e.src.mu.Lock()
		defer e.src.mu.Unlock()
		return len(e.src.watches) == 0
	})
}

// Lost history closes every watcher with ErrCompacted and drops the ring.
func TestStorageCompactionClosesWatchers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	w := e.watch(t, 0, Options{})
	e.src.put("/pods/ns/a", "x|1", "")
	next(t, w)
	e.src.failAll(fmt.Errorf("gone: %w", storage.ErrCompacted))
	if _, ok := <-w.Events(); ok {
		t.Fatal("watcher still open after the storage watch lost history")
	}
	if !errors.Is(w.Err(), storage.ErrCompacted) {
		t.Errorf("err = %v, want ErrCompacted", w.Err())
	}
	// The ring starts again where the next watcher does.
	w2 := e.watch(t, 1, Options{})
	if n := len(w2.Backlog()); n != 0 {
		t.Errorf("backlog after losing history = %d events, want 0", n)
	}
}

func TestWatchRefusesForeignPrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	if _, err := e.cache.Watch(e.ctx, 0, Options{KeyPrefix: "/services/"}); err == nil {
		t.Error("Watch outside the cache's prefix succeeded")
	}
}

// An indexed watcher's progress moves past the events it is not handed,
// but never past one still in its buffer.
func TestProgressPastOtherIndexValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	a := e.watch(t, 0, Options{Indexed: true, IndexValue: "a"})
	ra := e.src.put("/pods/ns/pa", "a|1", "")
	rb := e.src.put("/pods/ns/pb", "b|1", "")
	waitFor(t, "both events to be dispatched", func() bool { return e.cache.dispatched.Load() == rb })
	if got := a.Progress(); got != 0 {
		t.Errorf("progress with an event waiting = %d, want 0", got)
	}
	if ev := next(t, a); ev.Revision != ra {
		t.Fatalf("got %d, want %d", ev.Revision, ra)
	}
	if got := a.Progress(); got != rb {
		t.Errorf("progress = %d, want %d (past node b's pod)", got, rb)
	}
}
