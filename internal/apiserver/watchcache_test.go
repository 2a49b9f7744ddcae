package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// startWatchCacheServer is a server of the test's own, so that the watch
// cache's counters and ring are not shared with other tests.
func startWatchCacheServer(t *testing.T, cfg Config) (*testRunning, kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg.BookmarkInterval = 300 * time.Millisecond
	run, err := startRunning(ctx, t.TempDir(), cfg)
	if err != nil {
		t.Fatalf("starting API server: %v", err)
	}
	t.Cleanup(func() { _ = run.Stop(context.Background()) })
	rc, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc.QPS, rc.Burst = 1000, 1000
	return run, kubernetes.NewForConfigOrDie(rc)
}

// counterValue reads one series of a counter from the server's registry.
func counterValue(t *testing.T, s *Server, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := s.gatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func nextEvent(t *testing.T, ctx context.Context, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	return watch.Event{}
}

// Node agents watch their own node's pods: N of them share one etcd watch,
// and each gets its own pod's events and nothing of the others'.
func TestWatchFanOutOneEtcdWatch(t *testing.T) {
	t.Parallel()
	run, c := startWatchCacheServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const nodes = 40
	list, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws := make([]watch.Interface, nodes)
	for i := range ws {
		w, err := c.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{
			ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true,
			FieldSelector: fmt.Sprintf("spec.nodeName=node-%d", i),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ws[i] = w
	}
	for i := range nodes {
		if _, err := c.CoreV1().Pods("default").Create(ctx, labelledPod(fmt.Sprintf("p%d", i), "x", fmt.Sprintf("node-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range ws {
		ev := nextEvent(t, ctx, w)
		for ev.Type == watch.Bookmark {
			ev = nextEvent(t, ctx, w)
		}
		p, ok := ev.Object.(*corev1.Pod)
		if ev.Type != watch.Added || !ok || p.Name != fmt.Sprintf("p%d", i) {
			t.Fatalf("node-%d watcher got %s %v, want ADDED p%d", i, ev.Type, ev.Object, i)
		}
		// The next thing it gets is a bookmark, not another node's pod.
		if ev := nextEvent(t, ctx, w); ev.Type != watch.Bookmark {
			t.Fatalf("node-%d watcher then got %s %v, want only a bookmark", i, ev.Type, ev.Object)
		}
	}
	got := counterValue(t, run.Server, "apiserver_watch_cache_initializations_total", map[string]string{"group": "", "resource": "pods"})
	if got != 1 {
		t.Errorf("etcd watches of pods = %v, want 1 for %d API watches", got, nodes)
	}
}

// A watch resumes from a resourceVersion the ring still holds and gets
// kube's 410 for an older one, even though etcd has not compacted it.
func TestWatchResumeFromRingAndExpired(t *testing.T) {
	t.Parallel()
	_, c := startWatchCacheServer(t, Config{WatchCacheCapacity: 4})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cms := c.CoreV1().ConfigMaps("default")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The first watch starts the cache at the list's revision.
	first, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	var revs []string
	for i := range 10 {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, cm.ResourceVersion)
	}
	for range revs {
		nextEvent(t, ctx, first)
	}
	// The ring holds cm6..cm9: resuming after cm5 gets exactly those.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: revs[5]})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := 6; i < 10; i++ {
		ev := nextEvent(t, ctx, w)
		if cm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || cm.Name != fmt.Sprintf("cm%d", i) {
			t.Fatalf("resumed watch got %s %v, want ADDED cm%d", ev.Type, ev.Object, i)
		}
	}
	old, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: revs[1]})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Stop()
	ev := nextEvent(t, ctx, old)
	st, ok := ev.Object.(*metav1.Status)
	oldest, _ := strconv.ParseInt(revs[5], 10, 64)
	want := fmt.Sprintf("too old resource version: %s (%d)", revs[1], oldest)
	if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired || st.Message != want {
		t.Fatalf("watch from %s got %s %+v, want ERROR 410 Expired %q", revs[1], ev.Type, ev.Object, want)
	}
	if !apierrors.IsResourceExpired(apierrors.FromObject(st)) {
		t.Errorf("client-go does not read %v as expired", st)
	}
}

// A node's watch is not handed other nodes' pods, and its bookmarks still
// move past them, so a client resuming from its last bookmark starts from
// a recent revision (kube's cacher bookmarks its own revision alike).
func TestWatchBookmarkPastOtherNodes(t *testing.T) {
	t.Parallel()
	_, c := startWatchCacheServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{
		ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true, FieldSelector: "spec.nodeName=node-a",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	p, err := c.CoreV1().Pods("default").Create(ctx, labelledPod("elsewhere", "x", "node-b"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created, _ := strconv.ParseInt(p.ResourceVersion, 10, 64)
	for {
		ev := nextEvent(t, ctx, w)
		if ev.Type != watch.Bookmark {
			t.Fatalf("node-a watch got %s %v, want only bookmarks", ev.Type, ev.Object)
		}
		rv, _ := strconv.ParseInt(ev.Object.(*corev1.Pod).ResourceVersion, 10, 64)
		if rv >= created {
			return
		}
	}
}

// A client that stops reading its watch is closed once its buffer is full,
// without an error event, and never holds up the other watches of the kind.
func TestWatchSlowClientClosedOthersServed(t *testing.T) {
	t.Parallel()
	run, c := startWatchCacheServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cms := c.CoreV1().ConfigMaps("default")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()

	// The slow client: HTTP/1.1 with a 4 KiB receive buffer it never
	// reads, so the server's writes block once its send buffer is full.
	rc, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := rest.TLSConfigFor(rest.AnonymousClientConfig(rc))
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	addr := strings.TrimPrefix(run.URL, "https://")
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	tlsConfig.ServerName = "127.0.0.1"
	slow := tls.Client(raw, tlsConfig)
	defer slow.Close()
	fmt.Fprintf(slow, "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n",
		list.ResourceVersion, addr, rc.BearerToken)
	br := bufio.NewReader(slow)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("slow watch: %s", resp.Status)
	}

	// 200 events of 100 KiB: far more than the socket buffers (the
	// server's send buffer grows to 4 MiB on Linux) and the watcher's 100
	// events hold.
	const n = 200
	payload := strings.Repeat("x", 100<<10)
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big%d", i)}, Data: map[string]string{"x": payload}}, metav1.CreateOptions{}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := range n {
		if ev := nextEvent(t, ctx, fast); ev.Type != watch.Added {
			t.Fatalf("fast watch event %d: %s %v", i, ev.Type, ev.Object)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"group": "", "resource": "configmaps"}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return counterValue(t, run.Server, "apiserver_terminated_watchers_total", labels) == 1, nil
	}); err != nil {
		t.Fatalf("the slow watch was not closed: %v", err)
	}
	// What it was sent ends cleanly, with no ERROR event: kube closes such
	// a watch and the client resumes from its last resourceVersion.
	// Through the 4 KiB window that would take minutes: open it.
	if err := raw.(*net.TCPConn).SetReadBuffer(8 << 20); err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the slow watch to its end: %v", err)
	}
	if bytes.Contains(body, []byte(`"type":"ERROR"`)) {
		t.Errorf("the slow watch ended with an ERROR event")
	}
	if got := bytes.Count(body, []byte(`"type":"ADDED"`)); got == 0 || got >= n {
		t.Errorf("the slow watch got %d events before it was closed, want some and fewer than %d", got, n)
	}
}

// syncBuffer is a log destination tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A graceful stop ends the watch caches' etcd watches before storage
// closes: stopping is not a failed storage watch of every kind (it used to
// log one warning per watched kind at every Ctrl-C of up).
func TestShutdownStopsWatchCaches(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := startRunning(ctx, t.TempDir(), Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("starting API server: %v", err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", run.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(rc)
	for _, watch := range []func() (watch.Interface, error){
		func() (watch.Interface, error) { return c.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{}) },
		func() (watch.Interface, error) { return c.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{}) },
	} {
		w, err := watch()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	if err := run.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "storage watch failed") {
		t.Errorf("stopping logged failed storage watches:\n%s", logs.String())
	}
}
