package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// storeEnv is what a store test case gets: a fresh Store under a prefix of its own and
// the raw client (for compaction).
type storeEnv struct {
	client   *clientv3.Client
	newStore func(opts ...Option) *Store
}

// storeCases run against the embedded etcd (TestStore) and, when the etcd binary is
// installed, against an external etcd over TLS (TestStoreExternal).
var storeCases = []struct {
	name string
	run  func(t *testing.T, env storeEnv)
}{
	{"CreateGetExists", testCreateGetExists},
	{"UpdateCAS", testUpdateCAS},
	{"Delete", testDelete},
	{"DeletePrefix", testDeletePrefix},
	{"ListPrefix", testListPrefix},
	{"ListPagingConsistent", testListPagingConsistent},
	{"ListBadContinue", testListBadContinue},
	{"ListAtRevision", testListAtRevision},
	{"ListCompacted", testListCompacted},
	{"WatchFromRevision", testWatchFromRevision},
	{"WatchFromNow", testWatchFromNow},
	{"WatchCompacted", testWatchCompacted},
	{"WatchStop", testWatchStop},
	{"WatchSlowConsumer", testWatchSlowConsumer},
	{"ConcurrentCASCounter", testConcurrentCASCounter},
	{"TooLarge", testTooLarge},
}

func runStoreCases(t *testing.T, client *clientv3.Client) {
	t.Helper()
	for _, tc := range storeCases {
		t.Run(tc.name, func(t *testing.T) {
			env := storeEnv{
				client: client,
				newStore: func(opts ...Option) *Store {
					return New(client, "/test/"+t.Name(), opts...)
				},
			}
			tc.run(t, env)
		})
	}
}

func TestStore(t *testing.T) {
	runStoreCases(t, sharedClient)
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCreate(t *testing.T, s *Store, key, value string) KV {
	t.Helper()
	kv, err := s.Create(testCtx(t), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%s): %v", key, err)
	}
	return kv
}

func testCreateGetExists(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)

	created := mustCreate(t, s, "pods/ns1/a", "v1")
	if created.ModRevision == 0 || created.CreateRevision != created.ModRevision {
		t.Fatalf("create revisions = %+v, want equal and non-zero", created)
	}
	got, err := s.Get(ctx, "pods/ns1/a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != "pods/ns1/a" || string(got.Value) != "v1" || got.ModRevision != created.ModRevision || got.CreateRevision != created.CreateRevision {
		t.Fatalf("Get = %+v, want %+v", got, created)
	}

	if _, err := s.Create(ctx, "pods/ns1/a", []byte("v2")); !errors.Is(err, ErrExists) {
		t.Fatalf("second Create: err = %v, want ErrExists", err)
	} else if !strings.Contains(err.Error(), "pods/ns1/a") {
		t.Errorf("error %q does not name the key", err)
	}
	if got, _ := s.Get(ctx, "pods/ns1/a"); string(got.Value) != "v1" {
		t.Fatalf("failed Create overwrote the value: %q", got.Value)
	}
	if _, err := s.Get(ctx, "pods/ns1/missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Create(ctx, "", []byte("x")); err == nil {
		t.Fatal("Create with an empty key succeeded")
	}
	rev, err := s.CurrentRevision(ctx)
	if err != nil || rev < created.ModRevision {
		t.Fatalf("CurrentRevision = %d, %v; want >= %d", rev, err, created.ModRevision)
	}
}

func testUpdateCAS(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	tests := []struct {
		name    string
		setup   bool // create the key first
		expect  func(created KV) int64
		wantErr error
	}{
		{"matching revision", true, func(c KV) int64 { return c.ModRevision }, nil},
		{"stale revision", true, func(c KV) int64 { return c.ModRevision - 1 }, ErrConflict},
		{"future revision", true, func(c KV) int64 { return c.ModRevision + 1000 }, ErrConflict},
		{"unconditional", true, func(KV) int64 { return 0 }, nil},
		{"absent key", false, func(KV) int64 { return 5 }, ErrNotFound},
		{"absent key unconditional", false, func(KV) int64 { return 0 }, ErrNotFound},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("cm/ns/k%d", i)
			var created KV
			if tt.setup {
				created = mustCreate(t, s, key, "old")
			}
			kv, err := s.Update(ctx, key, []byte("new"), tt.expect(created))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Update err = %v, want %v", err, tt.wantErr)
			}
			cur, getErr := s.Get(ctx, key)
			if tt.wantErr != nil {
				if errors.Is(tt.wantErr, ErrConflict) && !strings.Contains(err.Error(), strconv.FormatInt(created.ModRevision, 10)) {
					t.Errorf("conflict error %q does not name the current revision %d", err, created.ModRevision)
				}
				if tt.setup && (string(cur.Value) != "old" || cur.ModRevision != created.ModRevision) {
					t.Errorf("failed Update changed the key: %+v", cur)
				}
				if !tt.setup && !errors.Is(getErr, ErrNotFound) {
					t.Errorf("failed Update created the key: %v", getErr)
				}
				return
			}
			if kv.ModRevision <= created.ModRevision {
				t.Errorf("Update = %+v, created %+v", kv, created)
			}
			if string(cur.Value) != "new" || cur.ModRevision != kv.ModRevision || cur.CreateRevision != created.CreateRevision {
				t.Errorf("after Update Get = %+v, want value new at %d", cur, kv.ModRevision)
			}
		})
	}
}

func testDelete(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	tests := []struct {
		name    string
		setup   bool
		expect  func(created KV) int64
		wantErr error
	}{
		{"matching revision", true, func(c KV) int64 { return c.ModRevision }, nil},
		{"stale revision", true, func(c KV) int64 { return c.ModRevision - 1 }, ErrConflict},
		{"unconditional", true, func(KV) int64 { return 0 }, nil},
		{"absent key", false, func(KV) int64 { return 7 }, ErrNotFound},
		{"absent key unconditional", false, func(KV) int64 { return 0 }, ErrNotFound},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("svc/ns/k%d", i)
			var created KV
			if tt.setup {
				created = mustCreate(t, s, key, "last")
			}
			kv, err := s.Delete(ctx, key, tt.expect(created))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Delete err = %v, want %v", err, tt.wantErr)
			}
			_, getErr := s.Get(ctx, key)
			if tt.wantErr != nil {
				if tt.setup && getErr != nil {
					t.Errorf("failed Delete removed the key: %v", getErr)
				}
				return
			}
			if !errors.Is(getErr, ErrNotFound) {
				t.Errorf("after Delete Get err = %v, want ErrNotFound", getErr)
			}
			if kv.Key != key || string(kv.Value) != "last" || kv.ModRevision <= created.ModRevision || kv.CreateRevision != created.CreateRevision {
				t.Errorf("Delete = %+v, want last value with a newer revision than %+v", kv, created)
			}
		})
	}
}

func testDeletePrefix(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	for _, k := range []string{"pods/a/1", "pods/a/2", "pods/a/3", "pods/ab/1", "pods/b/1"} {
		mustCreate(t, s, k, "x")
	}
	n, err := s.DeletePrefix(ctx, "pods/a/")
	if err != nil || n != 3 {
		t.Fatalf("DeletePrefix = %d, %v; want 3", n, err)
	}
	res, err := s.List(ctx, "pods/", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(res.Items); strings.Join(got, ",") != "pods/ab/1,pods/b/1" {
		t.Fatalf("left after DeletePrefix: %v", got)
	}
	if _, err := s.DeletePrefix(ctx, ""); err == nil {
		t.Fatal("DeletePrefix with an empty prefix succeeded")
	}
}

func keysOf(kvs []KV) []string {
	var keys []string
	for _, kv := range kvs {
		keys = append(keys, kv.Key)
	}
	return keys
}

func testListPrefix(t *testing.T, env storeEnv) {
	s := env.newStore()
	var last KV
	for _, k := range []string{"pods/ns1/b", "pods/ns1/a", "pods/ns10/c", "pods/ns2/d", "services/ns1/x", "nodes/n1"} {
		last = mustCreate(t, s, k, "v-"+k)
	}
	// A store under a sibling prefix must not show up.
	other := New(env.client, "/test/"+t.Name()+"x")
	mustCreate(t, other, "pods/ns1/zz", "other")

	tests := []struct {
		prefix string
		want   string
	}{
		{"pods/ns1/", "pods/ns1/a,pods/ns1/b"},
		{"pods/", "pods/ns1/a,pods/ns1/b,pods/ns10/c,pods/ns2/d"},
		{"nodes/", "nodes/n1"},
		{"", "nodes/n1,pods/ns1/a,pods/ns1/b,pods/ns10/c,pods/ns2/d,services/ns1/x"},
		{"configmaps/", ""},
	}
	for _, tt := range tests {
		t.Run("prefix="+tt.prefix, func(t *testing.T) {
			res, err := s.List(testCtx(t), tt.prefix, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(keysOf(res.Items), ","); got != tt.want {
				t.Fatalf("keys = %q, want %q", got, tt.want)
			}
			for _, kv := range res.Items {
				if string(kv.Value) != "v-"+kv.Key || kv.ModRevision == 0 {
					t.Errorf("item %+v", kv)
				}
			}
			if res.Revision < last.ModRevision || res.Continue != "" || res.RemainingItemCount != nil {
				t.Errorf("Revision %d (want >= %d), Continue %q, Remaining %v", res.Revision, last.ModRevision, res.Continue, res.RemainingItemCount)
			}
		})
	}
}

func testListPagingConsistent(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	var want []string
	for i := range 10 {
		k := fmt.Sprintf("pods/ns/p%02d", i)
		mustCreate(t, s, k, "orig")
		want = append(want, k)
	}

	var got []KV
	var firstRev int64
	opts := ListOptions{Limit: 3}
	for page := 0; ; page++ {
		res, err := s.List(ctx, "pods/ns/", opts)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if page == 0 {
			firstRev = res.Revision
		} else if res.Revision != firstRev {
			t.Fatalf("page %d read at revision %d, first page at %d", page, res.Revision, firstRev)
		}
		if len(res.Items) > 3 {
			t.Fatalf("page %d has %d items, limit 3", page, len(res.Items))
		}
		got = append(got, res.Items...)
		if res.Continue == "" {
			if res.RemainingItemCount != nil {
				t.Errorf("last page RemainingItemCount = %d, want nil", *res.RemainingItemCount)
			}
			break
		}
		if wantRemaining := int64(10 - len(got)); res.RemainingItemCount == nil || *res.RemainingItemCount != wantRemaining {
			t.Errorf("page %d RemainingItemCount = %v, want %d", page, res.RemainingItemCount, wantRemaining)
		}
		// Writes between pages must not leak into the list.
		mustCreate(t, s, fmt.Sprintf("pods/ns/p%02d-new", page), "new")
		mustCreate(t, s, "pods/ns/zz-new-"+strconv.Itoa(page), "new")
		cur, err := s.Get(ctx, "pods/ns/p09")
		if err == nil {
			if _, err := s.Update(ctx, "pods/ns/p09", []byte("changed"), cur.ModRevision); err != nil {
				t.Fatal(err)
			}
		}
		if page == 1 {
			if _, err := s.Delete(ctx, "pods/ns/p08", 0); err != nil {
				t.Fatal(err)
			}
		}
		opts.Continue = res.Continue
	}
	if gotKeys := strings.Join(keysOf(got), ","); gotKeys != strings.Join(want, ",") {
		t.Fatalf("paged keys = %s, want %s", gotKeys, strings.Join(want, ","))
	}
	for _, kv := range got {
		if string(kv.Value) != "orig" || kv.ModRevision > firstRev {
			t.Errorf("item %s = %q at %d, want the value as of revision %d", kv.Key, kv.Value, kv.ModRevision, firstRev)
		}
	}
}

func testListBadContinue(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	mustCreate(t, s, "cm/ns/a", "x")
	mustCreate(t, s, "cm/ns/b", "x")
	first, err := s.List(ctx, "cm/ns/", ListOptions{Limit: 1})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name string
		opts ListOptions
	}{
		{"not base64", ListOptions{Continue: "!!not-base64!!"}},
		{"not json", ListOptions{Continue: enc("hello")}},
		{"zero revision", ListOptions{Continue: enc(`{"rv":0,"start":"a"}`)}},
		{"negative revision", ListOptions{Continue: enc(`{"rv":-3,"start":"a"}`)}},
		{"no start", ListOptions{Continue: enc(`{"rv":5}`)}},
		{"wrong field types", ListOptions{Continue: enc(`{"rv":"5","start":1}`)}},
		{"revision disagrees with token", ListOptions{Continue: first.Continue, Revision: first.Revision + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.List(ctx, "cm/ns/", tt.opts)
			if !errors.Is(err, ErrBadContinue) {
				t.Fatalf("err = %v, want ErrBadContinue", err)
			}
		})
	}
	// The same revision as the token's is fine.
	if _, err := s.List(ctx, "cm/ns/", ListOptions{Continue: first.Continue, Revision: first.Revision}); err != nil {
		t.Fatalf("continue with matching revision: %v", err)
	}
}

func testListAtRevision(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	a := mustCreate(t, s, "cm/ns/a", "a1")
	b := mustCreate(t, s, "cm/ns/b", "b1")
	snapshot := b.ModRevision
	if _, err := s.Update(ctx, "cm/ns/a", []byte("a2"), a.ModRevision); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "cm/ns/b", 0); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "cm/ns/c", "c1")

	render := func(res ListResult) string {
		var parts []string
		for _, kv := range res.Items {
			parts = append(parts, kv.Key+"="+string(kv.Value))
		}
		return strings.Join(parts, ",")
	}
	old, err := s.List(ctx, "cm/ns/", ListOptions{Revision: snapshot})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(old); got != "cm/ns/a=a1,cm/ns/b=b1" || old.Revision != snapshot {
		t.Fatalf("List at %d = %s (revision %d)", snapshot, got, old.Revision)
	}
	cur, err := s.List(ctx, "cm/ns/", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(cur); got != "cm/ns/a=a2,cm/ns/c=c1" {
		t.Fatalf("List latest = %s", got)
	}
	if _, err := s.List(ctx, "cm/ns/", ListOptions{Revision: cur.Revision + 1000}); !errors.Is(err, ErrFutureRevision) {
		t.Fatalf("List at a future revision: err = %v, want ErrFutureRevision", err)
	}
}

func compactNow(t *testing.T, client *clientv3.Client) int64 {
	t.Helper()
	resp, err := client.Get(testCtx(t), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Compact(testCtx(t), resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func testListCompacted(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	a := mustCreate(t, s, "cm/ns/a", "x")
	mustCreate(t, s, "cm/ns/b", "x")
	page, err := s.List(ctx, "cm/ns/", ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "cm/ns/a", []byte("y"), a.ModRevision); err != nil {
		t.Fatal(err)
	}
	compactNow(t, env.client)

	if _, err := s.List(ctx, "cm/ns/", ListOptions{Continue: page.Continue}); !errors.Is(err, ErrCompacted) {
		t.Fatalf("continue after compaction: err = %v, want ErrCompacted", err)
	}
	if _, err := s.List(ctx, "cm/ns/", ListOptions{Revision: a.ModRevision}); !errors.Is(err, ErrCompacted) {
		t.Fatalf("list at a compacted revision: err = %v, want ErrCompacted", err)
	}
}

// collect reads n events or fails the test after a timeout.
func collect(t *testing.T, w Watch, n int) []Event {
	t.Helper()
	var evs []Event
	timeout := time.After(10 * time.Second)
	for len(evs) < n {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch closed after %d of %d events: %v", len(evs), n, w.Err())
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("timed out after %d of %d events", len(evs), n)
		}
	}
	return evs
}

// waitClosed drains the watch until it closes and returns what it drained and Err.
func waitClosed(t *testing.T, w Watch) ([]Event, error) {
	t.Helper()
	var evs []Event
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return evs, w.Err()
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatal("watch did not close")
		}
	}
}

func testWatchFromRevision(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	mustCreate(t, s, "pods/other/x", "not watched")
	start, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Write first, watch afterwards: a watch from a past revision replays history.
	var want []Event
	a1 := mustCreate(t, s, "pods/ns/a", "a1")
	want = append(want, Event{Type: Added, KV: a1})
	a2, err := s.Update(ctx, "pods/ns/a", []byte("a2"), a1.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	a2.CreateRevision = a1.CreateRevision // the event has it; Update does not return it
	want = append(want, Event{Type: Modified, KV: a2, PrevValue: []byte("a1")})
	mustCreate(t, s, "pods/other/y", "not watched")
	b1 := mustCreate(t, s, "pods/ns/b", "b1")
	want = append(want, Event{Type: Added, KV: b1})
	ad, err := s.Delete(ctx, "pods/ns/a", a2.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, Event{Type: Deleted, KV: ad, PrevValue: []byte("a2")})
	a3 := mustCreate(t, s, "pods/ns/a", "a3") // re-created: Added again, not Modified
	want = append(want, Event{Type: Added, KV: a3})

	w, err := s.Watch(ctx, "pods/ns/", start)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got := collect(t, w, len(want))

	// Writes after the watch started arrive too, after the replayed ones.
	if _, err := s.DeletePrefix(ctx, "pods/ns/"); err != nil {
		t.Fatal(err)
	}
	got = append(got, collect(t, w, 2)...)
	want = append(want,
		Event{Type: Deleted, KV: KV{Key: "pods/ns/a", Value: []byte("a3"), CreateRevision: a3.CreateRevision}, PrevValue: []byte("a3")},
		Event{Type: Deleted, KV: KV{Key: "pods/ns/b", Value: []byte("b1"), CreateRevision: b1.CreateRevision}, PrevValue: []byte("b1")})

	for i := range want {
		g, w := got[i], want[i]
		if g.Type != w.Type || g.KV.Key != w.KV.Key || !bytes.Equal(g.KV.Value, w.KV.Value) || g.KV.CreateRevision != w.KV.CreateRevision {
			t.Errorf("event %d = %v %+v, want %v %+v", i, g.Type, g.KV, w.Type, w.KV)
		}
		// The previous value is what a filtered API watch decides enter/leave on.
		if !bytes.Equal(g.PrevValue, w.PrevValue) {
			t.Errorf("event %d (%v %s) previous value %q, want %q", i, g.Type, g.KV.Key, g.PrevValue, w.PrevValue)
		}
		if w.KV.ModRevision != 0 && g.KV.ModRevision != w.KV.ModRevision {
			t.Errorf("event %d revision %d, want %d", i, g.KV.ModRevision, w.KV.ModRevision)
		}
		if i > 0 && g.KV.ModRevision < got[i-1].KV.ModRevision {
			t.Errorf("event %d out of order: revision %d after %d", i, g.KV.ModRevision, got[i-1].KV.ModRevision)
		}
	}
	// Both deletes of DeletePrefix share the one revision of that transaction.
	if got[5].KV.ModRevision != got[6].KV.ModRevision || got[5].KV.ModRevision <= a3.ModRevision {
		t.Errorf("DeletePrefix events at %d and %d", got[5].KV.ModRevision, got[6].KV.ModRevision)
	}
}

func testWatchFromNow(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	mustCreate(t, s, "cm/ns/before", "x")
	w, err := s.Watch(ctx, "cm/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// No sleep: a write acknowledged after Watch returns must be seen.
	after := mustCreate(t, s, "cm/ns/after", "y")
	ev := collect(t, w, 1)[0]
	if ev.Type != Added || ev.KV.Key != "cm/ns/after" || ev.KV.ModRevision != after.ModRevision {
		t.Fatalf("first event = %v %+v, want Added cm/ns/after", ev.Type, ev.KV)
	}
}

func testWatchCompacted(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	old := mustCreate(t, s, "cm/ns/a", "x")
	mustCreate(t, s, "cm/ns/b", "x")
	compacted := compactNow(t, env.client)

	w, err := s.Watch(ctx, "cm/", old.ModRevision-1)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := waitClosed(t, w)
	if !errors.Is(err, ErrCompacted) || len(evs) != 0 {
		t.Fatalf("watch from compacted revision: %d events, err = %v; want ErrCompacted", len(evs), err)
	}
	if !strings.Contains(err.Error(), strconv.FormatInt(compacted, 10)) {
		t.Errorf("error %q does not name the oldest available revision %d", err, compacted)
	}

	// Right at the compaction point still works.
	w2, err := s.Watch(ctx, "cm/", compacted)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	mustCreate(t, s, "cm/ns/c", "x")
	if ev := collect(t, w2, 1)[0]; ev.KV.Key != "cm/ns/c" {
		t.Fatalf("event after compaction point = %+v", ev.KV)
	}
}

func testWatchStop(t *testing.T, env storeEnv) {
	s := env.newStore()
	w, err := s.Watch(testCtx(t), "cm/", 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	if _, err := waitClosed(t, w); err != nil {
		t.Fatalf("Err after Stop = %v, want nil", err)
	}
	w.Stop() // idempotent

	ctx, cancel := context.WithCancel(testCtx(t))
	w, err = s.Watch(ctx, "cm/", 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := waitClosed(t, w); err != nil {
		t.Fatalf("Err after context cancel = %v, want nil", err)
	}
}

func testWatchSlowConsumer(t *testing.T, env storeEnv) {
	s := env.newStore(WithWatchBuffer(4), WithWatchSlowTimeout(100*time.Millisecond))
	ctx := testCtx(t)
	w, err := s.Watch(ctx, "cm/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const writes = 20
	for i := range writes {
		mustCreate(t, s, fmt.Sprintf("cm/ns/k%02d", i), "x")
	}
	// A consumer that does not read until the watch gave up on it.
	testkit.PollEvery(t, "the watch ending the slow consumer", 10*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
		return w.Err() != nil, nil
	})
	evs, err := waitClosed(t, w)
	if !errors.Is(err, ErrWatchTooSlow) || !errors.Is(err, ErrCompacted) {
		t.Fatalf("err = %v, want ErrWatchTooSlow and ErrCompacted", err)
	}
	if len(evs) < 4 || len(evs) >= writes {
		t.Fatalf("got %d events before the error, want the buffered ones (>= 4, < %d)", len(evs), writes)
	}
	for i, ev := range evs { // delivered events are an unbroken prefix
		if want := fmt.Sprintf("cm/ns/k%02d", i); ev.KV.Key != want {
			t.Fatalf("event %d = %s, want %s", i, ev.KV.Key, want)
		}
	}
}

func testConcurrentCASCounter(t *testing.T, env storeEnv) {
	s := env.newStore()
	ctx := testCtx(t)
	mustCreate(t, s, "counter", "0")
	const workers, perWorker = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range perWorker {
				for attempt := 0; ; attempt++ {
					if attempt > 1000 {
						errs <- errors.New("too many conflicts")
						return
					}
					cur, err := s.Get(ctx, "counter")
					if err != nil {
						errs <- err
						return
					}
					n, _ := strconv.Atoi(string(cur.Value))
					_, err = s.Update(ctx, "counter", []byte(strconv.Itoa(n+1)), cur.ModRevision)
					if errors.Is(err, ErrConflict) {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	final, err := s.Get(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if string(final.Value) != strconv.Itoa(workers*perWorker) {
		t.Fatalf("counter = %s, want %d (an update was lost)", final.Value, workers*perWorker)
	}
}

func testTooLarge(t *testing.T, env storeEnv) {
	s := env.newStore()
	// etcd's default --max-request-bytes is 1.5 MiB; above about 2 MiB gRPC itself refuses
	// the message. Both must come back as ErrTooLarge and store nothing.
	for _, size := range []int{1600 << 10, 3 << 20} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			key := "cm/ns/big" + strconv.Itoa(size)
			_, err := s.Create(testCtx(t), key, bytes.Repeat([]byte("x"), size))
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			if _, err := s.Get(testCtx(t), key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the refused value was stored: %v", err)
			}
		})
	}
}
