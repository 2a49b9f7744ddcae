package apiserver

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
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
