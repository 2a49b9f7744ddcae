// Package storage is dnsplane's object store: opaque values under string keys in etcd,
// with the revision semantics Kubernetes clients rely on. resourceVersion is the etcd mod
// revision, every write is a single etcd transaction, and conditional writes compare the
// mod revision inside that transaction, so several API server processes can share one
// etcd cluster without coordinating among themselves.
//
// Keys given to a Store are relative ("pods/ns1/web"); the Store adds its prefix
// ("/registry/pods/ns1/web") and strips it again from everything it returns.
package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// KV is one stored value with its etcd revisions. Key is relative to the Store's prefix.
type KV struct {
	Key            string
	Value          []byte
	ModRevision    int64
	CreateRevision int64
}

// Store is safe for concurrent use: it holds no state besides its configuration; all
// coordination happens in etcd.
type Store struct {
	client *clientv3.Client
	// prefix always ends in "/" so that relative keys cannot run into a sibling prefix
	// ("/registry" + "pods" must not become "/registrypods").
	prefix string

	watchBuffer      int
	watchSlowTimeout time.Duration
}

// Option tunes a Store.
type Option func(*Store)

// WithWatchBuffer sets how many events a watch buffers for its consumer before it starts
// counting the consumer as slow (default 1000; values < 1 are ignored).
func WithWatchBuffer(n int) Option {
	return func(s *Store) {
		if n > 0 {
			s.watchBuffer = n
		}
	}
}

// WithWatchSlowTimeout sets how long a watch waits for a consumer whose buffer is full
// before ending with ErrWatchTooSlow (default 10s; values <= 0 are ignored).
func WithWatchSlowTimeout(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.watchSlowTimeout = d
		}
	}
}

// New returns a Store that keeps its keys under prefix (e.g. "/registry").
func New(client *clientv3.Client, prefix string, opts ...Option) *Store {
	s := &Store{
		client:           client,
		prefix:           strings.TrimRight(prefix, "/") + "/",
		watchBuffer:      1000,
		watchSlowTimeout: 10 * time.Second,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// fullKey maps a relative key to the etcd key. An empty key is refused because it would
// address the prefix itself, which no object may occupy.
func (s *Store) fullKey(key string) (string, error) {
	if key == "" {
		return "", errors.New("storage: empty key")
	}
	return s.prefix + key, nil
}

// relKey is the inverse of fullKey for keys etcd returns.
func (s *Store) relKey(full []byte) string {
	return strings.TrimPrefix(string(full), s.prefix)
}

// Create stores value under key only if the key is absent.
func (s *Store) Create(ctx context.Context, key string, value []byte) (KV, error) {
	full, err := s.fullKey(key)
	if err != nil {
		return KV{}, err
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(full), "=", 0)).
		Then(clientv3.OpPut(full, string(value))).
		Commit()
	if err != nil {
		return KV{}, fmt.Errorf("creating %s: %w", key, translate(err))
	}
	if !resp.Succeeded {
		return KV{}, fmt.Errorf("creating %s: %w", key, ErrExists)
	}
	rev := resp.Header.Revision
	return KV{Key: key, Value: value, ModRevision: rev, CreateRevision: rev}, nil
}

// Get reads the latest value of key (a linearizable read).
func (s *Store) Get(ctx context.Context, key string) (KV, error) {
	full, err := s.fullKey(key)
	if err != nil {
		return KV{}, err
	}
	resp, err := s.client.Get(ctx, full)
	if err != nil {
		return KV{}, fmt.Errorf("getting %s: %w", key, translate(err))
	}
	if len(resp.Kvs) == 0 {
		return KV{}, fmt.Errorf("getting %s: %w", key, ErrNotFound)
	}
	kv := resp.Kvs[0]
	return KV{Key: key, Value: kv.Value, ModRevision: kv.ModRevision, CreateRevision: kv.CreateRevision}, nil
}

// Update replaces the value of an existing key if its mod revision is still
// expectModRevision. expectModRevision 0 skips the revision check (an unconditional
// update, as for a PUT without resourceVersion), but the key must still exist: an update
// never creates. The KV returned has no CreateRevision.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectModRevision int64) (KV, error) {
	full, err := s.fullKey(key)
	if err != nil {
		return KV{}, err
	}
	cond := clientv3.Compare(clientv3.ModRevision(full), "=", expectModRevision)
	if expectModRevision == 0 {
		cond = clientv3.Compare(clientv3.CreateRevision(full), ">", 0)
	}
	// The else branch's keys-only read says why a failed compare failed
	// without shipping the value back. The success branch reads nothing:
	// etcd counts a range inside a write transaction as a read of its own
	// (twice, in 3.6 and later), and the create revision it would give is
	// the caller's already.
	resp, err := s.client.Txn(ctx).
		If(cond).
		Then(clientv3.OpPut(full, string(value))).
		Else(clientv3.OpGet(full, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return KV{}, fmt.Errorf("updating %s: %w", key, translate(err))
	}
	if !resp.Succeeded {
		return KV{}, s.casFailure("updating", key, expectModRevision, resp)
	}
	return KV{Key: key, Value: value, ModRevision: resp.Header.Revision}, nil
}

// Delete removes key if its mod revision is still expectModRevision (0: unconditionally)
// and returns its last value, with ModRevision set to the revision of the delete itself:
// that is the resourceVersion a DELETED watch event reports.
func (s *Store) Delete(ctx context.Context, key string, expectModRevision int64) (KV, error) {
	full, err := s.fullKey(key)
	if err != nil {
		return KV{}, err
	}
	cond := clientv3.Compare(clientv3.ModRevision(full), "=", expectModRevision)
	if expectModRevision == 0 {
		cond = clientv3.Compare(clientv3.CreateRevision(full), ">", 0)
	}
	resp, err := s.client.Txn(ctx).
		If(cond).
		Then(clientv3.OpDelete(full, clientv3.WithPrevKV())).
		Else(clientv3.OpGet(full, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return KV{}, fmt.Errorf("deleting %s: %w", key, translate(err))
	}
	if !resp.Succeeded {
		return KV{}, s.casFailure("deleting", key, expectModRevision, resp)
	}
	prev := resp.Responses[0].GetResponseDeleteRange().GetPrevKvs()
	if len(prev) != 1 {
		// The compare held, so the key existed inside this transaction.
		return KV{}, fmt.Errorf("deleting %s: etcd returned %d previous values, want 1", key, len(prev))
	}
	return KV{
		Key:            key,
		Value:          prev[0].Value,
		ModRevision:    resp.Header.Revision,
		CreateRevision: prev[0].CreateRevision,
	}, nil
}

// casFailure explains why a conditional transaction did not apply, from the keys-only
// read in its else branch.
func (s *Store) casFailure(verb, key string, expect int64, resp *clientv3.TxnResponse) error {
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return fmt.Errorf("%s %s: %w", verb, key, ErrNotFound)
	}
	return fmt.Errorf("%s %s: expected revision %d, current revision %d: %w",
		verb, key, expect, kvs[0].ModRevision, ErrConflict)
}

// DeletePrefix removes every key under keyPrefix (e.g. "pods/ns1/") in one transaction and
// returns how many it removed. Watchers see one Deleted event per key. An empty prefix is
// refused: it would wipe the whole store, which no API operation needs.
func (s *Store) DeletePrefix(ctx context.Context, keyPrefix string) (int64, error) {
	if keyPrefix == "" {
		return 0, errors.New("storage: refusing to delete with an empty prefix")
	}
	full := s.prefix + keyPrefix
	resp, err := s.client.Delete(ctx, full, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("deleting prefix %s: %w", keyPrefix, translate(err))
	}
	return resp.Deleted, nil
}

// CurrentRevision returns etcd's current revision (a linearizable read, so it is at least
// the revision of every write acknowledged before the call).
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	resp, err := s.client.Get(ctx, s.prefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("reading current revision: %w", translate(err))
	}
	return resp.Header.Revision, nil
}
