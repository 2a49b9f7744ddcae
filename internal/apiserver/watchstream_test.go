package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
)

// deadlineRecorder records the write deadlines a watch stream sets, as
// http.ResponseController sets them; with block, a Write waits until a
// deadline in the past is set and then fails, like a write to a client
// that does not read.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	mu        sync.Mutex
	deadlines []time.Time
	block     bool
	writing   chan struct{} // closed when a blocked Write starts
	cut       chan struct{} // closed by a deadline in the past
}

func newDeadlineRecorder(block bool) *deadlineRecorder {
	return &deadlineRecorder{ResponseRecorder: httptest.NewRecorder(), block: block, writing: make(chan struct{}), cut: make(chan struct{})}
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deadlines = append(d.deadlines, t)
	if !t.IsZero() && t.Before(time.Now()) {
		select {
		case <-d.cut:
		default:
			close(d.cut)
		}
	}
	return nil
}

func (d *deadlineRecorder) Write(p []byte) (int, error) {
	d.mu.Lock()
	block := d.block
	d.mu.Unlock()
	if block {
		close(d.writing)
		<-d.cut
		return 0, errors.New("i/o timeout")
	}
	return d.ResponseRecorder.Write(p)
}

func (d *deadlineRecorder) last() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deadlines[len(d.deadlines)-1]
}

func configMapResource(t *testing.T) *Resource {
	t.Helper()
	res, ok := sharedServer(t).run.Server.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if !ok {
		t.Fatal("configmaps are not served")
	}
	return res
}

func testConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}}
}

// Each event's write has a deadline, cleared when the write is done: one
// left behind would fail the first write after an idle spell longer than
// the timeout (HTTP/1) or reset the stream when it passed (HTTP/2).
func TestWatchStreamDeadlinePerWrite(t *testing.T) {
	t.Parallel()
	res := configMapResource(t)
	w := newDeadlineRecorder(false)
	ws := newWatchStream(w, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?watch=true", nil), res, time.Now, time.Minute)
	ws.start()
	for range 2 {
		before := time.Now()
		if err := ws.send("ADDED", testConfigMap()); err != nil {
			t.Fatal(err)
		}
		w.mu.Lock()
		armed := w.deadlines[len(w.deadlines)-2]
		w.mu.Unlock()
		if armed.Before(before.Add(time.Minute)) {
			t.Errorf("the write's deadline is %v, want a minute after it started", armed)
		}
		if !w.last().IsZero() {
			t.Errorf("a deadline is left after the write: %v", w.last())
		}
	}
}

// abort cuts a write that is blocked on the client; an idle stream is
// not cut (it ends cleanly), and no send follows an abort.
func TestWatchStreamAbort(t *testing.T) {
	t.Parallel()
	res := configMapResource(t)
	t.Run("blocked write", func(t *testing.T) {
		t.Parallel()
		w := newDeadlineRecorder(false)
		ws := newWatchStream(w, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?watch=true", nil), res, time.Now, time.Hour)
		ws.start()
		w.mu.Lock()
		w.block = true
		w.mu.Unlock()
		errc := make(chan error, 1)
		go func() { errc <- ws.send("ADDED", testConfigMap()) }()
		<-w.writing
		ws.abort()
		if err := <-errc; err == nil {
			t.Fatal("the blocked send succeeded after abort")
		}
		if err := ws.send("ADDED", testConfigMap()); !errors.Is(err, errWatchAborted) {
			t.Fatalf("send after abort: %v, want errWatchAborted", err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		w := newDeadlineRecorder(false)
		ws := newWatchStream(w, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?watch=true", nil), res, time.Now, time.Hour)
		ws.start()
		ws.abort()
		select {
		case <-w.cut:
			t.Fatal("an idle stream's connection got a deadline in the past")
		default:
		}
		if err := ws.send("ADDED", testConfigMap()); !errors.Is(err, errWatchAborted) {
			t.Fatalf("send after abort: %v, want errWatchAborted", err)
		}
	})
}

// An idle watch outlives its write timeout: the timeout bounds each
// write, not the time between events (client-go's watches go over HTTP/2,
// where a deadline left set resets the stream when it passes).
func TestIdleWatchOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	l := filters.DefaultLimits()
	l.WatchWriteTimeout = 200 * time.Millisecond
	_, cfg := startMemoryServer(t, l)
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cms := c.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, testConfigMapNamed("first"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := nextEvent(t, ctx, w); ev.Type != watch.Added {
		t.Fatalf("first event %s, want ADDED", ev.Type)
	}
	// Idle for several write timeouts: nothing may arrive, and the
	// stream must not end.
	select {
	case ev, ok := <-w.ResultChan():
		t.Fatalf("idle watch: got %v (open %v)", ev, ok)
	case <-time.After(5 * l.WatchWriteTimeout):
	}
	if _, err := cms.Create(ctx, testConfigMapNamed("second"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, ctx, w); ev.Type != watch.Added {
		t.Fatalf("event after the idle spell: %s %v, want ADDED", ev.Type, ev.Object)
	}
}

func testConfigMapNamed(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
