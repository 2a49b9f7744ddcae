package watchcache

import (
	"strings"
	"sync"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// Event is one storage event as every watcher of the resource shares it. The
// decoded objects are shared too: callers must not modify them.
type Event struct {
	Type     storage.EventType
	Key      string
	Revision int64

	decode Decoder
	kv     storage.KV
	prev   []byte

	objOnce sync.Once
	obj     any
	objErr  error

	prevOnce sync.Once
	prevObj  any
	prevErr  error

	indexOnce           sync.Once
	indexCur, indexPrev string
	indexOK             bool
}

// NewEvent wraps one storage event; decode is called lazily, once per value.
func NewEvent(se storage.Event, decode Decoder) *Event {
	return &Event{Type: se.Type, Key: se.KV.Key, Revision: se.KV.ModRevision, decode: decode, kv: se.KV, prev: se.PrevValue}
}

// Object is the object after the event, nil for a delete. It is decoded on
// the first call, once for all watchers.
func (e *Event) Object() (any, error) {
	if e.Type == storage.Deleted {
		return nil, nil
	}
	e.objOnce.Do(func() { e.obj, e.objErr = e.decode(e.kv) })
	return e.obj, e.objErr
}

// PrevObject is the object before the event (for a delete, the deleted
// object), nil for a create, with the event's revision as storage.Event's
// KV carries it. Decoded on the first call only: an unfiltered watcher of
// updates never needs it.
func (e *Event) PrevObject() (any, error) {
	if e.Type == storage.Added || e.prev == nil {
		return nil, nil
	}
	e.prevOnce.Do(func() {
		kv := e.kv
		kv.Value = e.prev
		e.prevObj, e.prevErr = e.decode(kv)
	})
	return e.prevObj, e.prevErr
}

// indexValues returns the indexed field before and after the event; a
// side that does not exist has "". ok is false if an object cannot be
// decoded.
func (e *Event) indexValues(index IndexFunc) (cur, prev string, ok bool) {
	e.indexOnce.Do(func() { e.indexCur, e.indexPrev, e.indexOK = e.computeIndex(index) })
	return e.indexCur, e.indexPrev, e.indexOK
}

func (e *Event) computeIndex(index IndexFunc) (cur, prev string, ok bool) {
	obj, err := e.Object()
	if err != nil {
		return "", "", false
	}
	if obj != nil {
		cur = index(obj)
	}
	p, err := e.PrevObject()
	if err != nil {
		return "", "", false
	}
	if p != nil {
		prev = index(p)
	}
	return cur, prev, true
}

// Watcher is one watch served by a Cache.
type Watcher struct {
	cache   *Cache
	opts    Options
	from    int64
	backlog []*Event
	events  chan *Event

	stopOnce sync.Once
	stopped  chan struct{}

	closeOnce sync.Once
	mu        sync.Mutex
	err       error
}

// Backlog is the events after the watch's revision that the ring already
// held when it started, oldest first; they come before any on Events.
func (w *Watcher) Backlog() []*Event { return w.backlog }

// Events delivers the events after the backlog in revision order. It is
// closed when the watcher fell behind or the storage watch failed, and Err
// then says why; a watcher that is stopped is just no longer fed.
func (w *Watcher) Events() <-chan *Event { return w.events }

// Err is nil while Events is open. It wraps storage.ErrCompacted when the
// history is lost (answer 410) and storage.ErrWatchTooSlow when the watcher
// was closed for falling behind (kube ends such a stream without an error:
// the client resumes from the last revision it got).
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Progress returns a revision such that every event up to it that concerns
// the watcher has been taken from Events, or 0 while some are waiting
// there. A bookmark may carry it: with an index, a watcher is not handed the
// events of other nodes' pods, and its bookmarks still move past them, as
// kube's cacher's do.
func (w *Watcher) Progress() int64 {
	// Read the revision first: every send for it happened before it was
	// stored, so an empty buffer after the read means they were all taken.
	rev := w.cache.dispatched.Load()
	if len(w.events) > 0 || rev < w.from {
		return 0
	}
	return rev
}

// Stop unregisters the watcher; the last one to go stops the storage watch.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.stopped)
		w.cache.mu.Lock()
		w.cache.removeLocked(w)
		w.cache.mu.Unlock()
	})
}

// indexed: the watcher gets only its index value's events (a cache
// without an index hands every watcher everything).
func (w *Watcher) indexed() bool { return w.opts.Indexed && w.cache.cfg.Index != nil }

func (w *Watcher) wants(ev *Event) bool {
	if !strings.HasPrefix(ev.Key, w.opts.KeyPrefix) {
		return false
	}
	if !w.indexed() {
		return true
	}
	cur, prev, ok := ev.indexValues(w.cache.cfg.Index)
	return ok && (cur == w.opts.IndexValue || prev == w.opts.IndexValue)
}

// tryAdd delivers ev if there is room; a stopped watcher takes anything.
func (w *Watcher) tryAdd(ev *Event) bool {
	select {
	case w.events <- ev:
		return true
	case <-w.stopped:
		return true
	default:
		return false
	}
}

// close is called by the cache's dispatching goroutine only, after the
// watcher left the cache's sets, so no send can follow it.
func (w *Watcher) close(err error) {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		close(w.events)
	})
}
