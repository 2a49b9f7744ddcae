// Package watchcache serves many API watches of one resource from a single
// storage watch: each event is read from etcd once, decoded once, kept in a
// bounded ring for watches that resume from a recent resourceVersion, and
// handed in memory to the watches it concerns, found through an optional
// index (a pod's spec.nodeName), as k8s.io/apiserver's cacher does. Why it is
// not the cacher itself is in docs/architecture.md ("Watch fan-out").
package watchcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// Source is the storage a Cache watches: one watch per Cache at a time.
type Source interface {
	Watch(ctx context.Context, keyPrefix string, fromRevision int64) (storage.Watch, error)
	CurrentRevision(ctx context.Context) (int64, error)
}

// Decoder turns a stored value into the object watchers get. It is called at
// most once per event and value, whatever the number of watchers.
type Decoder func(kv storage.KV) (any, error)

// IndexFunc returns the value of the indexed field of a decoded object.
type IndexFunc func(obj any) string

// Defaults. The ring keeps the last DefaultCapacity events of a resource:
// kube's watch cache keeps between 100 and 102,400 sized to 75 s of history;
// a fixed 1,024 is about ten seconds of a busy cluster's pod churn, which
// covers a client reconnecting right after its watch timed out or was
// closed, and caps the ring of pods at roughly 1,024 decoded pods (a few MiB;
// docs/apiserver.md "Watch"). A watcher buffers DefaultWatcherBuffer events,
// kube's largest channel for a watch without an index (100), and the
// dispatcher waits for full buffers out of a time budget refilled at 50 ms per
// second up to 100 ms, kube's dispatchTimeoutBudget, so one stuck watcher
// costs the others at most that before it is closed.
const (
	DefaultCapacity      = 1024
	DefaultWatcherBuffer = 100
	budgetRefill         = 50 * time.Millisecond // per second
	budgetMax            = 100 * time.Millisecond
)

// ErrTooOld is wrapped (together with storage.ErrCompacted) by Watch when the
// requested revision is older than the ring holds.
var ErrTooOld = errors.New("watchcache: resource version too old")

// TooOldError says which revision was asked for and the oldest one the
// ring can resume from, which kube's cacher puts in its 410 message.
type TooOldError struct {
	Requested, Oldest int64
}

func (e *TooOldError) Error() string {
	return fmt.Sprintf("too old resource version: %d (%d)", e.Requested, e.Oldest)
}

// Is makes a TooOldError match ErrTooOld and storage.ErrCompacted: the
// remedy for both is to relist.
func (e *TooOldError) Is(target error) bool {
	return target == ErrTooOld || target == storage.ErrCompacted
}

// Config is what a Cache needs.
type Config struct {
	Source Source
	// Prefix is the key prefix of the whole resource (every namespace).
	Prefix string
	Decode Decoder
	// Index, if set, lets watchers that ask for one value of the field get
	// only the events of objects that have (or had) it.
	Index IndexFunc
	// Capacity of the ring (DefaultCapacity if 0) and of each watcher's
	// buffer (DefaultWatcherBuffer if 0).
	Capacity, WatcherBuffer int
	Logger                  *slog.Logger
	// OnStorageWatch is called each time the cache opens a storage watch;
	// OnTerminated each time it closes a watcher that fell behind.
	OnStorageWatch, OnTerminated func()
	// Now is the clock of the dispatch budget (time.Now if nil).
	Now func() time.Time
}

// Cache fans one storage watch out to many watchers.
type Cache struct {
	cfg Config

	mu sync.Mutex
	// ring holds the last events in revision order: ring[head] is the
	// oldest, n of cap(ring) are used.
	ring []*Event
	head int
	n    int
	// valid: window and latest mean something; every event with a revision
	// in (window, latest] is in the ring.
	valid          bool
	window, latest int64
	watchers       map[*Watcher]struct{}
	// Every watcher is in unindexed or under its value in byIndex, so an
	// event costs nothing per watcher of another node.
	unindexed map[*Watcher]struct{}
	byIndex   map[string]map[*Watcher]struct{}
	// gen numbers storage watches so that one being stopped never
	// dispatches after its successor started.
	gen     int
	running bool
	cancel  context.CancelFunc
	done    chan struct{} // closed when the current run goroutine returns

	budget budget // used by the dispatching goroutine only

	// dispatched is the revision of the last event handed to every watcher
	// it concerns (stored after the sends): what a watcher's bookmark may
	// claim once its buffer is empty.
	dispatched atomic.Int64
}

// New returns a Cache; it opens its storage watch on the first Watch and
// keeps it until the storage watch fails or Stop.
func New(cfg Config) (*Cache, error) {
	if cfg.Source == nil || cfg.Decode == nil {
		return nil, fmt.Errorf("watchcache %q: a source and a decoder are required", cfg.Prefix)
	}
	if cfg.Capacity <= 0 {
		cfg.Capacity = DefaultCapacity
	}
	if cfg.WatcherBuffer <= 0 {
		cfg.WatcherBuffer = DefaultWatcherBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cache{
		cfg:       cfg,
		ring:      make([]*Event, cfg.Capacity),
		watchers:  map[*Watcher]struct{}{},
		unindexed: map[*Watcher]struct{}{},
		byIndex:   map[string]map[*Watcher]struct{}{},
		budget:    budget{now: cfg.Now, left: budgetMax},
	}, nil
}

// Options select what a watcher gets.
type Options struct {
	// KeyPrefix limits the watch to keys under it (a namespace); it must
	// start with the Cache's prefix.
	KeyPrefix string
	// IndexValue, when Indexed, limits the watch to objects whose indexed
	// field has (or had, before the event) this value. Only an exact match
	// may be indexed: the watcher must not need any other event.
	IndexValue string
	Indexed    bool
}

// Watch returns a watcher of the events after fromRevision (0: after the
// current revision). Events still in the ring are in its Backlog; the rest
// arrive on Events. A revision older than the ring is a *TooOldError.
func (c *Cache) Watch(ctx context.Context, fromRevision int64, opts Options) (*Watcher, error) {
	if !strings.HasPrefix(opts.KeyPrefix, c.cfg.Prefix) {
		return nil, fmt.Errorf("watchcache %q: key prefix %q is outside it", c.cfg.Prefix, opts.KeyPrefix)
	}
	if fromRevision < 0 {
		return nil, fmt.Errorf("watchcache %q: negative revision %d", c.cfg.Prefix, fromRevision)
	}
	if fromRevision == 0 {
		// "From now" must see every write acknowledged after Watch returns,
		// which the ring's latest revision may lag behind.
		rev, err := c.cfg.Source.CurrentRevision(ctx)
		if err != nil {
			return nil, fmt.Errorf("watchcache %q: %w", c.cfg.Prefix, err)
		}
		fromRevision = rev
	}
	w := &Watcher{
		cache:   c,
		opts:    opts,
		from:    fromRevision,
		events:  make(chan *Event, c.cfg.WatcherBuffer),
		stopped: make(chan struct{}),
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid {
		// No history yet (or it was lost): the ring starts where the first
		// watcher does, so the list it just made resumes without a 410.
		c.valid, c.window, c.latest = true, fromRevision, fromRevision
	}
	if fromRevision < c.window {
		return nil, &TooOldError{Requested: fromRevision, Oldest: c.window}
	}
	at := func(i int) *Event { return c.ring[(c.head+i)%len(c.ring)] }
	// The ring is in revision order: skip what the watcher has seen.
	for i := sort.Search(c.n, func(i int) bool { return at(i).Revision > fromRevision }); i < c.n; i++ {
		if ev := at(i); w.wants(ev) {
			w.backlog = append(w.backlog, ev)
		}
	}
	c.watchers[w] = struct{}{}
	if w.indexed() {
		set := c.byIndex[opts.IndexValue]
		if set == nil {
			set = map[*Watcher]struct{}{}
			c.byIndex[opts.IndexValue] = set
		}
		set[w] = struct{}{}
	} else {
		c.unindexed[w] = struct{}{}
	}
	if !c.running {
		c.startLocked()
	}
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.stopped:
		}
	}()
	return w, nil
}

// Stop ends the storage watch and closes every watcher (Err nil). The
// cache may be watched again; it then resumes from the ring's latest
// revision.
func (c *Cache) Stop() {
	c.mu.Lock()
	done := c.done
	if c.running {
		c.running = false
		c.gen++
		c.cancel()
	}
	ws := make([]*Watcher, 0, len(c.watchers))
	for w := range c.watchers {
		ws = append(ws, w)
		c.removeLocked(w)
	}
	c.mu.Unlock()
	// Only the dispatching goroutine sends to watchers: close them once
	// it is gone.
	if done != nil {
		<-done
	}
	for _, w := range ws {
		w.close(nil)
	}
}

// startLocked opens the storage watch from the latest revision the ring has,
// so a cache restarted after a failure loses nothing in between.
func (c *Cache) startLocked() {
	c.gen++
	c.running = true
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done = make(chan struct{})
	go c.run(ctx, c.gen, c.latest, c.done)
}

// run reads one storage watch and dispatches its events until it ends.
func (c *Cache) run(ctx context.Context, gen int, from int64, done chan struct{}) {
	defer close(done)
	if c.cfg.OnStorageWatch != nil {
		c.cfg.OnStorageWatch()
	}
	sw, err := c.cfg.Source.Watch(ctx, c.cfg.Prefix, from)
	if err != nil {
		c.fail(gen, fmt.Errorf("watchcache %q: %w", c.cfg.Prefix, err))
		return
	}
	defer sw.Stop()
	for ev := range sw.Events() {
		if !c.dispatch(gen, ev) {
			return
		}
	}
	if ctx.Err() != nil {
		return // Stop
	}
	err = sw.Err()
	if err == nil {
		err = errors.New("storage watch ended")
	}
	c.fail(gen, fmt.Errorf("watchcache %q: %w", c.cfg.Prefix, err))
}

// fail closes every watcher with err. After lost history (compaction) the
// ring is dropped, since it can no longer be continued without a gap; after
// anything else it is kept and the next watcher resumes the storage watch
// from its latest revision.
func (c *Cache) fail(gen int, err error) {
	c.mu.Lock()
	if gen != c.gen {
		c.mu.Unlock()
		return
	}
	c.running = false
	c.cancel()
	if errors.Is(err, storage.ErrCompacted) {
		c.valid = false
		clear(c.ring)
		c.head, c.n = 0, 0
	}
	ws := make([]*Watcher, 0, len(c.watchers))
	for w := range c.watchers {
		ws = append(ws, w)
		c.removeLocked(w)
	}
	c.mu.Unlock()
	c.cfg.Logger.Warn("watch cache: storage watch failed, closing its watchers", "prefix", c.cfg.Prefix, "watchers", len(ws), "err", err)
	for _, w := range ws {
		w.close(err)
	}
}

// dispatch adds one storage event to the ring and hands it to the watchers
// it concerns; false means this storage watch has been replaced.
func (c *Cache) dispatch(gen int, se storage.Event) bool {
	// Not decoded here: an event nobody is watching costs no decode.
	ev := NewEvent(se, c.cfg.Decode)

	c.mu.Lock()
	if gen != c.gen {
		c.mu.Unlock()
		return false
	}
	c.appendLocked(ev)
	targets := c.targetsLocked(ev)
	c.mu.Unlock()

	defer c.dispatched.Store(ev.Revision)
	var blocked []*Watcher
	for _, w := range targets {
		if !w.tryAdd(ev) {
			blocked = append(blocked, w)
		}
	}
	if len(blocked) == 0 {
		return true
	}
	// Wait for the blocked ones out of the budget, all against one timer,
	// so every one of them gets the whole wait, then close the rest as kube's
	// cacher does: their clients resume from their last revision.
	start := c.cfg.Now()
	timer := time.NewTimer(c.budget.take())
	defer timer.Stop()
	expired := false
	for _, w := range blocked {
		if !expired {
			select {
			case w.events <- ev:
				continue
			case <-w.stopped:
				continue
			case <-timer.C:
				expired = true
			}
		}
		if !w.tryAdd(ev) {
			c.terminate(w)
		}
	}
	c.budget.giveBack(c.cfg.Now().Sub(start))
	return true
}

func (c *Cache) appendLocked(ev *Event) {
	if c.n == len(c.ring) {
		c.window = c.ring[c.head].Revision
		c.ring[c.head] = nil
		c.head = (c.head + 1) % len(c.ring)
		c.n--
	}
	c.ring[(c.head+c.n)%len(c.ring)] = ev
	c.n++
	c.latest = ev.Revision
}

// targetsLocked lists the watchers of ev: the unindexed ones whose key
// prefix it falls under, and the indexed ones whose value the object has
// now or had before.
func (c *Cache) targetsLocked(ev *Event) []*Watcher {
	var out []*Watcher
	add := func(w *Watcher) {
		if ev.Revision > w.from && strings.HasPrefix(ev.Key, w.opts.KeyPrefix) {
			out = append(out, w)
		}
	}
	for w := range c.unindexed {
		add(w)
	}
	if len(c.byIndex) == 0 {
		return out
	}
	cur, prev, ok := ev.indexValues(c.cfg.Index)
	if !ok {
		// Undecodable: no indexed watcher can use it either.
		return out
	}
	for w := range c.byIndex[cur] {
		add(w)
	}
	if prev != cur {
		for w := range c.byIndex[prev] {
			add(w)
		}
	}
	return out
}

func (c *Cache) terminate(w *Watcher) {
	c.mu.Lock()
	_, registered := c.watchers[w]
	c.removeLocked(w)
	c.mu.Unlock()
	if !registered {
		return
	}
	if c.cfg.OnTerminated != nil {
		c.cfg.OnTerminated()
	}
	c.cfg.Logger.Warn("watch cache: closing a watcher that fell behind", "prefix", w.opts.KeyPrefix, "buffer", cap(w.events))
	w.close(fmt.Errorf("watchcache %q: watcher took no event with %d buffered: %w", c.cfg.Prefix, cap(w.events), storage.ErrWatchTooSlow))
}

// removeLocked forgets w. The storage watch keeps running when the last
// watcher goes, as kube's cacher does: the ring stays current, so a client
// that reconnects resumes from it, and etcd's compaction of the history
// meanwhile cannot make the next start fail.
func (c *Cache) removeLocked(w *Watcher) {
	if _, ok := c.watchers[w]; !ok {
		return
	}
	delete(c.watchers, w)
	delete(c.unindexed, w)
	if w.indexed() {
		set := c.byIndex[w.opts.IndexValue]
		delete(set, w)
		if len(set) == 0 {
			delete(c.byIndex, w.opts.IndexValue)
		}
	}
}

// Watchers returns how many watchers are registered.
func (c *Cache) Watchers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.watchers)
}

// budget is kube's dispatchTimeoutBudget: time the dispatcher may spend
// waiting for slow watchers, refilled with time up to a maximum.
type budget struct {
	now    func() time.Time
	left   time.Duration
	last   time.Time
	handed time.Duration
}

// take hands out all that is left.
func (b *budget) take() time.Duration {
	now := b.now()
	if !b.last.IsZero() {
		b.left += time.Duration(now.Sub(b.last).Seconds() * float64(budgetRefill))
	}
	b.last = now
	b.handed = min(b.left, budgetMax)
	b.left = 0
	return b.handed
}

// giveBack returns what the last take handed out and was not used.
func (b *budget) giveBack(used time.Duration) {
	b.left = min(budgetMax, b.left+max(0, b.handed-used))
	b.handed = 0
}
