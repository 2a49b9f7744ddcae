package storage

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EventType says what happened to a key.
type EventType int

// The event types, named as in a Kubernetes watch (String gives ADDED,
// MODIFIED, DELETED). The zero value is not a valid event type.
const (
	Added EventType = iota + 1
	Modified
	Deleted
)

func (t EventType) String() string {
	switch t {
	case Added:
		return "ADDED"
	case Modified:
		return "MODIFIED"
	case Deleted:
		return "DELETED"
	default:
		return fmt.Sprintf("EventType(%d)", int(t))
	}
}

// Event is one change. For Deleted, KV holds the value the key had just before the
// delete, with ModRevision set to the revision of the delete.
//
// PrevValue is the value the key had just before the change: nil for Added, the
// previous value for Modified, and KV.Value again for Deleted. A consumer filtering
// the stream needs it to tell an object entering its selection from one leaving it,
// as k8s.io/apiserver's etcd3 watcher does with etcd's PrevKV.
type Event struct {
	Type      EventType
	KV        KV
	PrevValue []byte
}

// Watch is a running watch.
//
// Events arrive in revision order, none skipped. The channel is closed when the watch's
// context ends, Stop is called, or the watch fails; after it is closed, Err tells which:
// nil for the first two. A failure is never silent and never leaves a gap: every event
// before it has been delivered (drain the channel to get them), and none after it is.
//
// Err wrapping ErrCompacted means the history needed to continue is gone, either because
// etcd compacted it or because the consumer fell too far behind (then it also wraps
// ErrWatchTooSlow): an API server turns both into 410 Gone (Expired) so the client
// relists. Other errors (etcd lost its leader, the client closed) mean the client may
// simply watch again from the last revision it received.
type Watch interface {
	Events() <-chan Event
	Err() error
	Stop()
}

type watch struct {
	events chan Event
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

func (w *watch) Events() <-chan Event { return w.events }

func (w *watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop ends the watch and waits until its goroutine has let go of etcd.
func (w *watch) Stop() {
	w.cancel()
	<-w.done
}

// Watch streams changes under keyPrefix with revision > fromRevision. fromRevision 0
// means "from now": the current revision is read first, so any write acknowledged after
// Watch returns is seen, even if etcd had not registered the watch yet.
//
// Backpressure: the watch buffers up to the Store's watch buffer size (WithWatchBuffer)
// for its consumer. When the buffer is full it waits at most the slow timeout
// (WithWatchSlowTimeout) for room, then ends with an error wrapping ErrWatchTooSlow and
// ErrCompacted, rather than holding etcd's stream (and memory) hostage to one consumer.
func (s *Store) Watch(ctx context.Context, keyPrefix string, fromRevision int64) (Watch, error) {
	if fromRevision < 0 {
		return nil, fmt.Errorf("watching %s: negative revision %d", keyPrefix, fromRevision)
	}
	if fromRevision == 0 {
		rev, err := s.CurrentRevision(ctx)
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", keyPrefix, err)
		}
		fromRevision = rev
	}

	wctx, cancel := context.WithCancel(ctx)
	w := &watch{
		events: make(chan Event, s.watchBuffer),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	full := s.prefix + keyPrefix
	// RequireLeader makes etcd end the watch when this member loses its leader instead
	// of silently delivering nothing while the member is cut off from the cluster.
	wch := s.client.Watch(clientv3.WithRequireLeader(wctx), full,
		clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(fromRevision+1))
	go s.pump(wctx, w, wch, keyPrefix, fromRevision)
	return w, nil
}

// pump copies etcd's responses to the consumer until the context ends or something fails.
func (s *Store) pump(ctx context.Context, w *watch, wch clientv3.WatchChan, keyPrefix string, from int64) {
	defer close(w.done)
	defer close(w.events)
	defer w.cancel() // also lets the etcd client drop the watch when we stop on an error

	fail := func(err error) {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}
	// send delivers without blocking while there is room and waits at most the slow
	// timeout when there is not; false means the watch must end.
	send := func(ev Event) bool {
		select {
		case w.events <- ev:
			return true
		default:
		}
		timer := time.NewTimer(s.watchSlowTimeout)
		defer timer.Stop()
		select {
		case w.events <- ev:
			return true
		case <-timer.C:
			fail(fmt.Errorf("watching %s: consumer took no event for %s with %d buffered (next revision %d): %w, treated as %w",
				keyPrefix, s.watchSlowTimeout, cap(w.events), ev.KV.ModRevision, ErrWatchTooSlow, ErrCompacted))
			return false
		case <-ctx.Done():
			return false
		}
	}

	for {
		resp, ok := <-wch
		if !ok {
			if ctx.Err() == nil {
				fail(fmt.Errorf("watching %s: etcd closed the watch unexpectedly", keyPrefix))
			}
			return
		}
		if resp.CompactRevision != 0 {
			fail(fmt.Errorf("watching %s from revision %d: oldest available revision is %d: %w",
				keyPrefix, from, resp.CompactRevision, ErrCompacted))
			return
		}
		if err := resp.Err(); err != nil {
			if ctx.Err() == nil {
				fail(fmt.Errorf("watching %s: %w", keyPrefix, translate(err)))
			}
			return
		}
		for _, ev := range resp.Events {
			out, err := s.convert(ev)
			if err != nil {
				fail(fmt.Errorf("watching %s: %w", keyPrefix, err))
				return
			}
			if !send(out) {
				return
			}
		}
	}
}

func (s *Store) convert(ev *clientv3.Event) (Event, error) {
	switch ev.Type {
	case clientv3.EventTypeDelete:
		// Without the previous value a consumer cannot say what was deleted; etcd only
		// omits it when that value's revision has been compacted in the meantime, so
		// treat it as lost history.
		if ev.PrevKv == nil {
			return Event{}, fmt.Errorf("delete of %s at revision %d arrived without its previous value: %w",
				s.relKey(ev.Kv.Key), ev.Kv.ModRevision, ErrCompacted)
		}
		return Event{Type: Deleted, KV: KV{
			Key:            s.relKey(ev.Kv.Key),
			Value:          ev.PrevKv.Value,
			ModRevision:    ev.Kv.ModRevision,
			CreateRevision: ev.PrevKv.CreateRevision,
		}, PrevValue: ev.PrevKv.Value}, nil
	default:
		out := Event{Type: Modified, KV: KV{
			Key:            s.relKey(ev.Kv.Key),
			Value:          ev.Kv.Value,
			ModRevision:    ev.Kv.ModRevision,
			CreateRevision: ev.Kv.CreateRevision,
		}}
		if ev.IsCreate() {
			out.Type = Added
			return out, nil
		}
		// As for a delete: etcd reads the previous value at the revision before
		// this one and omits it only when that is compacted, and without it a
		// filtered watch cannot tell whether the object left its selection.
		if ev.PrevKv == nil {
			return Event{}, fmt.Errorf("update of %s at revision %d arrived without its previous value: %w",
				out.KV.Key, ev.Kv.ModRevision, ErrCompacted)
		}
		out.PrevValue = ev.PrevKv.Value
		return out, nil
	}
}
