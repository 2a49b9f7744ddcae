package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/printers"
	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/watchcache"
)

func (s *Server) get(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	// A get with a resourceVersion wants the object as of that revision or
	// newer: wait for it (the read below is linearizable, so newer holds).
	rv, err := queryResourceVersion(r.URL.Query())
	if err != nil {
		return err
	}
	if err := s.waitForRevision(r.Context(), rv); err != nil {
		return store.Error(&res.Resource, info.Name, err)
	}
	kv, err := s.storage.Get(r.Context(), store.Key(&res.Resource, info.Namespace, info.Name))
	if err != nil {
		return store.Error(&res.Resource, info.Name, err)
	}
	obj, err := store.Decode(&res.Resource, kv)
	if err != nil {
		return err
	}
	return s.writeObjects(w, r, res, http.StatusOK, obj, nil, metav1.ListMeta{})
}

// writeObjects answers with one object (list == nil) or a list, as JSON,
// protobuf for the kinds with upstream's schema (protobuf.go), or, when the
// client asks for them, as a meta.k8s.io Table or metadata only.
func (s *Server) writeObjects(w http.ResponseWriter, r *http.Request, res *Resource, code int, obj any, list []any, lm metav1.ListMeta) error {
	out := negotiateOutput(r.Header.Get("Accept"), servesProtobuf(res))
	switch out.as {
	case tableKind:
		objs := list
		if list == nil {
			objs = []any{obj}
		}
		t, err := printers.Table(res.Resource, objs, r.URL.Query().Get("includeObject"), lm, s.now())
		if err != nil {
			return err
		}
		writeJSON(w, code, t)
		return nil
	case partialKind, partialListKind:
		p, err := partialResponse(res, out.as, out.version, obj, list, lm)
		if err != nil {
			return err
		}
		return writeBody(w, code, out.protobuf, p)
	}
	if out.protobuf {
		if list == nil {
			store.SetTypeMeta(&res.Resource, obj)
			return writeBody(w, code, true, obj)
		}
		pl, err := protobufList(res, list, lm)
		if err != nil {
			return err
		}
		return writeProtobuf(w, code, pl)
	}
	if list == nil {
		writeJSON(w, code, obj)
		return nil
	}
	writeJSON(w, code, listBody{
		TypeMeta: metav1.TypeMeta{Kind: res.GVK.Kind + "List", APIVersion: res.APIVersion()},
		ListMeta: lm,
		Items:    list,
	})
	return nil
}

// listBody is a <Kind>List; items always encode as an array, never null.
type listBody struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []any `json:"items"`
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	q := r.URL.Query()
	f, err := parseFilter(res, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	var limit int64
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.ParseInt(l, 10, 64); err != nil || limit < 0 {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q", l))
		}
	}
	rv, err := queryResourceVersion(q)
	if err != nil {
		return err
	}
	// NotOlderThan (the default) and Exact both need etcd at rv or later:
	// the list below reads the latest revision or exactly rv.
	if err := s.waitForRevision(r.Context(), rv); err != nil {
		return store.Error(&res.Resource, "", err)
	}
	opts := storage.ListOptions{Limit: limit, Continue: q.Get("continue")}
	if q.Get("resourceVersionMatch") == "Exact" {
		opts.Revision = rv
	}
	// A list the client did not page is read in pages of storagePageSize
	// at one revision (liststream.go), so it never holds the whole
	// collection's raw values.
	paged := limit == 0
	if paged {
		opts.Limit = storagePageSize
	}
	first, err := s.storage.List(r.Context(), store.ListPrefix(&res.Resource, info.Namespace), opts)
	if errors.Is(err, storage.ErrBadContinue) {
		return apierrors.NewBadRequest(err.Error())
	}
	if err != nil {
		return store.Error(&res.Resource, "", err)
	}
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatInt(first.Revision, 10)}
	if !paged {
		lm.Continue, lm.RemainingItemCount = first.Continue, first.RemainingItemCount
	}
	each := func(fn func(obj any) error) error {
		return s.storedPages(r.Context(), res, store.ListPrefix(&res.Resource, info.Namespace), first, opts, paged, func(obj any) error {
			if !f.matches(res, obj) {
				return nil
			}
			return fn(obj)
		})
	}
	out := negotiateOutput(r.Header.Get("Accept"), servesProtobuf(res))
	switch out.as {
	case "":
		if !out.protobuf {
			// Plain JSON, what kubectl -o json and curl get: encoded
			// item by item as the pages are read, never held whole.
			return s.streamList(w, r, res, lm, each)
		}
		// Protobuf, what client-go's typed clients get: the items are
		// held encoded, not decoded.
		pw := &protobufListWriter{res: res}
		if err := each(pw.add); err != nil {
			return err
		}
		defer boundWrites(w, r)()
		if err := pw.write(w, lm); err != nil {
			s.log.Debug("list: writing the response failed", "resource", res.Plural, "err", err)
		}
		return nil
	case tableKind:
		// kubectl get: each page becomes rows, and its objects are
		// dropped, so the list holds the rows, not every object.
		return s.tableList(w, r, res, lm, each)
	}
	items := make([]any, 0, len(first.Items))
	if err := each(func(obj any) error { items = append(items, obj); return nil }); err != nil {
		return err
	}
	return s.writeObjects(w, r, res, http.StatusOK, nil, items, lm)
}

// tableList answers a list as a meta.k8s.io Table, printed a page of
// storagePageSize objects at a time.
func (s *Server) tableList(w http.ResponseWriter, r *http.Request, res *Resource, lm metav1.ListMeta, each func(fn func(obj any) error) error) error {
	includeObject := r.URL.Query().Get("includeObject")
	now := s.now()
	var table *metav1.Table
	page := make([]any, 0, storagePageSize)
	flush := func() error {
		t, err := printers.Table(res.Resource, page, includeObject, lm, now)
		if err != nil {
			return err
		}
		if table == nil {
			table = t
		} else {
			table.Rows = append(table.Rows, t.Rows...)
		}
		clear(page)
		page = page[:0]
		return nil
	}
	err := each(func(obj any) error {
		page = append(page, obj)
		if len(page) == cap(page) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, table)
	return nil
}

// streamList writes a JSON list whose items each yields. An error before
// the first item is the client's error response; after it the 200 is sent,
// and the body is cut short (it no longer parses), as kube-apiserver's
// streaming encoder does.
func (s *Server) streamList(w http.ResponseWriter, r *http.Request, res *Resource, lm metav1.ListMeta, each func(fn func(obj any) error) error) error {
	defer boundWrites(w, r)()
	var lw *jsonListWriter
	err := each(func(obj any) error {
		if lw == nil {
			var err error
			if lw, err = startJSONList(w, res, lm); err != nil {
				return errStreamWrite{err}
			}
		}
		if err := lw.add(obj); err != nil {
			return errStreamWrite{err}
		}
		return nil
	})
	var werr errStreamWrite
	switch {
	case errors.As(err, &werr):
		// The client went away or stopped reading: nothing to answer.
		s.log.Debug("list: writing the response failed", "resource", res.Plural, "err", werr.err)
		return nil
	case err != nil && lw == nil:
		return err
	case err != nil:
		s.log.Error("list: failed after the response started", "resource", res.Plural, "err", err)
		return nil
	}
	if lw == nil {
		if lw, err = startJSONList(w, res, lm); err != nil {
			return nil
		}
	}
	if err := lw.end(); err != nil {
		s.log.Debug("list: writing the response failed", "resource", res.Plural, "err", err)
	}
	return nil
}

// boundWrites makes the request's deadline (--request-timeout, ?timeout=)
// bound the writes of a large list too: a client that stops reading would
// otherwise hold the handler, what it has read and its user's list slot
// for as long as it keeps the connection. The returned func clears the
// deadline, which net/http does not reset for the connection's next
// request.
func boundWrites(w http.ResponseWriter, r *http.Request) (undo func()) {
	d, ok := r.Context().Deadline()
	if !ok {
		return func() {}
	}
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(d) != nil {
		return func() {}
	}
	return func() { _ = rc.SetWriteDeadline(time.Time{}) }
}

// errStreamWrite marks a failed write to the client, as opposed to a
// failure to read or decode the list.
type errStreamWrite struct{ err error }

func (e errStreamWrite) Error() string { return e.err.Error() }

// watchEvent is one line of a watch stream.
type watchEvent struct {
	Type   string `json:"type"`
	Object any    `json:"object"`
}

// defaultWatchTimeout is kube-apiserver's: between 30 and 60 minutes, so
// watches of many clients do not all end at once.
func defaultWatchTimeout() time.Duration {
	return 30*time.Minute + time.Duration(rand.Int64N(int64(30*time.Minute)))
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	q := r.URL.Query()
	f, err := parseFilter(res, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	if info.Name != "" {
		// GET …/pods/<name>?watch=true watches one object.
		if f, err = parseFilter(res, q.Get("labelSelector"), joinSelector(q.Get("fieldSelector"), "metadata.name="+info.Name)); err != nil {
			return err
		}
	}
	rv, err := queryResourceVersion(q)
	if err != nil {
		return err
	}
	// Watching from a revision etcd has not reached would start the stream
	// and deliver nothing until it came, if ever. Wait for it before the 200
	// instead (on the request's context: timeoutSeconds bounds the stream,
	// not this wait), then stream every event after it; a revision that does
	// not come is a 504 before streaming.
	if err := s.waitForRevision(r.Context(), rv); err != nil {
		return store.Error(&res.Resource, "", err)
	}
	timeout := defaultWatchTimeout()
	if t := q.Get("timeoutSeconds"); t != "" {
		secs, err := strconv.ParseInt(t, 10, 64)
		if err != nil || secs < 0 {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", t))
		}
		timeout = time.Duration(secs) * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	prefix := store.ListPrefix(&res.Resource, info.Namespace)

	// With no resourceVersion (or "0") the stream starts with the current
	// objects as ADDED events, then continues from the revision they reflect.
	// sendInitialEvents=true (client-go's watch-list, which informers use
	// instead of LIST) asks for the same, ended by a marked bookmark.
	sendInitial := isTrue(q.Get("sendInitialEvents"))
	listing := rv == 0 || sendInitial
	// The current objects are read and sent a page at a time
	// (storagePageSize), not held whole while a client that does not read
	// keeps the stream open: 20 such watches of 20,000 ConfigMaps held
	// ~53 MB each (issue 29).
	listOpts := storage.ListOptions{Limit: storagePageSize}
	var first storage.ListResult
	from := rv
	if listing {
		if first, err = s.storage.List(ctx, prefix, listOpts); err != nil {
			return store.Error(&res.Resource, "", err)
		}
		from = first.Revision
	}
	cache, err := s.watchCaches.forResource(res)
	if err != nil {
		return err
	}
	wt, err := cache.Watch(ctx, from, watchOptions(res, prefix, f))
	stream := newWatchStream(w, r, res, s.now, s.limits.WatchWriteTimeoutOrDefault())
	if err != nil {
		var tooOld *watchcache.TooOldError
		switch {
		case errors.As(err, &tooOld):
			stream.expiredWith(tooOld.Error())
			return nil
		case errors.Is(err, storage.ErrCompacted):
			stream.expired(rv)
			return nil
		}
		return store.Error(&res.Resource, "", err)
	}
	defer wt.Stop()
	// A write blocked on a client that does not read must not outlive the
	// watch: when the watch ends (timeoutSeconds, the server's shutdown)
	// the pending write is cut at once instead of when the socket drains
	// (issue 29: such watches stretched a clean stop to 30s). A watcher the
	// cache closed for falling behind ends at its next write's deadline
	// (Limits.WatchWriteTimeout) unless the client reads by then; then it
	// ends cleanly, as kube's do.
	stopAbort := context.AfterFunc(ctx, stream.abort)
	defer stopAbort()
	defer stream.finish()
	stream.start()
	if listing {
		err := s.storedPages(ctx, res, prefix, first, listOpts, true, func(obj any) error {
			if !f.matches(res, obj) {
				return nil
			}
			return stream.send("ADDED", obj)
		})
		if err != nil {
			s.log.Debug("watch: initial events ended early", "resource", res.Plural, "err", err)
			return nil
		}
	}
	if sendInitial {
		if err := stream.initialEventsEnd(from); err != nil {
			return nil
		}
	}
	// The initial list is done: its slot of the user's lists is free.
	filters.InitialListDone(r.Context())
	last := from
	// send writes what this watcher sees of ev; false ends the stream.
	send := func(ev *watchcache.Event) bool {
		last = ev.Revision
		typ, obj, err := watchEventFor(res, f, ev)
		if err != nil {
			s.log.Error("watch: skipping undecodable object", "key", ev.Key, "err", err)
			return true
		}
		return obj == nil || stream.send(typ, obj) == nil
	}
	for _, ev := range wt.Backlog() {
		if !send(ev) {
			return nil
		}
	}
	bookmarks := isTrue(q.Get("allowWatchBookmarks"))
	ticker := time.NewTicker(s.cfg.BookmarkInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			if bookmarks {
				// Past the events this watch was not handed (other nodes'
				// pods) once it has sent all it was.
				if err := stream.bookmark(max(last, wt.Progress())); err != nil {
					return nil
				}
			}
		case ev, ok := <-wt.Events():
			if !ok {
				// A watcher closed for falling behind ends without an
				// error, as kube's: the client resumes from the last
				// revision it got, which the ring most likely still holds.
				if err := wt.Err(); errors.Is(err, storage.ErrCompacted) {
					stream.expired(last)
				}
				return nil
			}
			if !send(ev) {
				return nil
			}
		}
	}
}

// watchEventFor is what a watcher with filter f sees of one storage event,
// decided as k8s.io/apiserver does (cacher's convertToWatchEvent, etcd3
// watcher's transform): the selector is evaluated on the object before and
// after the change, so an object that enters the selection is ADDED, one
// that stays is MODIFIED, one that leaves it — or is deleted while in it —
// is DELETED, and one outside it before and after is not sent (nil). A
// DELETED carries the object as it was before the event, with the event's
// resourceVersion, as upstream's do (docs/apiserver.md, "Watch"). The
// objects are the watch cache's, shared by every watcher: read only.
func watchEventFor(res *Resource, f filter, ev *watchcache.Event) (string, any, error) {
	cur, err := ev.Object()
	if err != nil {
		return "", nil, err
	}
	// An unfiltered watch passes every object, so the previous one is only
	// needed for a delete, whose object it is.
	var prev any
	if ev.Type == storage.Deleted || !f.empty() {
		if prev, err = ev.PrevObject(); err != nil {
			return "", nil, err
		}
	}
	if f.empty() {
		switch ev.Type {
		case storage.Added:
			return "ADDED", cur, nil
		case storage.Deleted:
			return "DELETED", prev, nil
		}
		return "MODIFIED", cur, nil
	}
	curPasses := cur != nil && f.matches(res, cur)
	prevPasses := prev != nil && f.matches(res, prev)
	switch {
	case curPasses && prevPasses:
		return "MODIFIED", cur, nil
	case curPasses:
		return "ADDED", cur, nil
	case prevPasses:
		return "DELETED", prev, nil
	}
	return "", nil, nil
}

// listAll reads every object under prefix at one revision, page by page.
func (s *Server) listAll(ctx context.Context, res *Resource, prefix string) ([]any, int64, error) {
	var out []any
	opts := storage.ListOptions{Limit: 500}
	for {
		result, err := s.storage.List(ctx, prefix, opts)
		if err != nil {
			return nil, 0, store.Error(&res.Resource, "", err)
		}
		for _, kv := range result.Items {
			obj, err := store.Decode(&res.Resource, kv)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, obj)
		}
		if result.Continue == "" {
			return out, result.Revision, nil
		}
		opts.Continue = result.Continue
	}
}

func joinSelector(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

// watchStream writes watch events as kube-apiserver does: 200, JSON objects
// separated by newlines, or length-framed protobuf WatchEvents when
// negotiated (protobuf.go), flushed one by one.
type watchStream struct {
	w       http.ResponseWriter
	r       *http.Request
	res     *Resource
	enc     *json.Encoder
	pb      *protobufEvents // nil for JSON
	flusher http.Flusher
	table   bool
	started bool   // the 200 and headers are written
	first   bool   // no table event sent yet
	partial string // meta.k8s.io version of PartialObjectMetadata events; "" for objects
	now     func() time.Time

	// rc sets the write deadline of each event: a write that takes longer
	// than writeTimeout means a client that is not reading, and ends the
	// stream (see Limits.WatchWriteTimeout).
	rc           *http.ResponseController
	writeTimeout time.Duration
	mu           sync.Mutex
	aborted      bool
	writing      bool // between arm and disarm
	cut          bool // a write was cut: the connection is done
}

func newWatchStream(w http.ResponseWriter, r *http.Request, res *Resource, now func() time.Time, writeTimeout time.Duration) *watchStream {
	f, _ := w.(http.Flusher)
	out := negotiateOutput(r.Header.Get("Accept"), servesProtobuf(res))
	ws := &watchStream{w: w, r: r, res: res, enc: json.NewEncoder(w), flusher: f, table: out.as == tableKind, first: true, now: now,
		rc: http.NewResponseController(w), writeTimeout: writeTimeout}
	if out.as == partialKind || out.as == partialListKind {
		ws.partial = out.version
	}
	if out.protobuf {
		ws.pb = newProtobufEvents(w)
	}
	return ws
}

// errWatchAborted is a send after abort.
var errWatchAborted = errors.New("watch: stream aborted")

// arm sets the deadline of the next write, unless the stream was aborted.
func (ws *watchStream) arm() error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.aborted {
		return errWatchAborted
	}
	if ws.writeTimeout > 0 {
		// Best effort: a recorder in tests cannot; real connections can.
		_ = ws.rc.SetWriteDeadline(time.Now().Add(ws.writeTimeout))
	}
	ws.writing = true
	return nil
}

// disarm ends a write begun with arm and clears its deadline: a deadline
// left behind would fail the next write after an idle spell longer than
// the timeout (HTTP/1), or reset the stream when it passes (HTTP/2, whose
// deadline is a timer on the stream).
func (ws *watchStream) disarm() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.writing = false
	if ws.writeTimeout > 0 && !ws.cut {
		_ = ws.rc.SetWriteDeadline(time.Time{})
	}
}

// abort cuts a write in progress and fails every later one. It may be
// called from any goroutine.
func (ws *watchStream) abort() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.aborted {
		return
	}
	ws.aborted = true
	if !ws.writing {
		// Idle: the stream ends cleanly at the next send or when the
		// handler returns.
		return
	}
	// A deadline in the past fails the pending write now (HTTP/1: the
	// connection's; HTTP/2: the stream is reset).
	ws.cut = true
	_ = ws.rc.SetWriteDeadline(time.Now().Add(-time.Second))
}

// finish makes later aborts (the context's, racing the handler's return)
// no-ops: the stream has ended on its own, with no deadline left set.
func (ws *watchStream) finish() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.aborted = true
}

func (ws *watchStream) start() {
	if ws.started {
		return
	}
	if ws.arm() != nil {
		return
	}
	defer ws.disarm()
	ws.started = true
	ct := "application/json"
	if ws.pb != nil {
		ct = protobufStreamMediaType
	}
	ws.w.Header().Set("Content-Type", ct)
	ws.w.Header().Set("Cache-Control", "no-cache, private")
	ws.w.WriteHeader(http.StatusOK)
	ws.flush()
}

func (ws *watchStream) flush() {
	if ws.flusher != nil {
		ws.flusher.Flush()
	}
}

func (ws *watchStream) send(typ string, obj any) error {
	out := obj
	if ws.table && typ != "BOOKMARK" && typ != "ERROR" {
		t, err := printers.Table(ws.res.Resource, []any{obj}, ws.r.URL.Query().Get("includeObject"), metav1.ListMeta{}, ws.now())
		if err != nil {
			return err
		}
		if !ws.first {
			// Column definitions come with the first event only, so a
			// printer prints its header once.
			t.ColumnDefinitions = nil
		}
		ws.first = false
		out = t
	}
	if ws.partial != "" && typ != "ERROR" {
		// Each event's object, bookmarks included, is metadata only.
		out = asPartial(obj, ws.partial)
	}
	if err := ws.arm(); err != nil {
		return err
	}
	defer ws.disarm()
	if ws.pb != nil {
		o, ok := out.(runtime.Object)
		if !ok {
			return fmt.Errorf("watch: %T is not an object", out)
		}
		if err := ws.pb.send(typ, o); err != nil {
			return err
		}
		ws.flush()
		return nil
	}
	if err := ws.enc.Encode(watchEvent{Type: typ, Object: out}); err != nil {
		return err
	}
	ws.flush()
	return nil
}

// bookmark sends an empty object of the watched kind carrying only the
// revision the client has seen everything up to.
func (ws *watchStream) bookmark(rev int64) error {
	obj := ws.res.New()
	store.SetTypeMeta(&ws.res.Resource, obj)
	store.Accessor(obj).SetResourceVersion(strconv.FormatInt(rev, 10))
	return ws.send("BOOKMARK", obj)
}

// initialEventsEnd is the bookmark that tells a watch-list client it has
// every object as of rev.
func (ws *watchStream) initialEventsEnd(rev int64) error {
	obj := ws.res.New()
	store.SetTypeMeta(&ws.res.Resource, obj)
	m := store.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	return ws.send("BOOKMARK", obj)
}

// expired ends the stream the way kube-apiserver does when the requested
// revision is compacted: 200, then one ERROR event with a 410 Expired Status.
// The storage error is not passed on: it names storage keys.
func (ws *watchStream) expired(rv int64) {
	ws.expiredWith(fmt.Sprintf("too old resource version: %d", rv))
}

// expiredWith is expired with kube's message for the case, e.g. the watch
// cache's "too old resource version: <asked> (<oldest>)".
func (ws *watchStream) expiredWith(msg string) {
	ws.start()
	st := statusFor(apierrors.NewResourceExpired(msg))
	_ = ws.send("ERROR", &st)
}
