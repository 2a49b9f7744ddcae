package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// nextEvent is the next event of w within timeout.
func nextEvent(t *testing.T, w watch.Interface, timeout time.Duration) watch.Event {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-timer.C:
		t.Fatalf("no watch event within %v", timeout)
		return watch.Event{}
	}
}

// wantEvent requires the next event to be typ for the ConfigMap name.
func wantEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) *corev1.ConfigMap {
	t.Helper()
	ev := nextEvent(t, w, 10*time.Second)
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != typ || !ok || cm.Name != name {
		t.Fatalf("event %s %#v, want %s of ConfigMap %s", ev.Type, ev.Object, typ, name)
	}
	return cm
}

// TestWatchResumeAndExpiry drives watches with client-go (JSON): a watch
// from a list's resourceVersion replays what happened since, in order; a
// watch from a resourceVersion older than the watch cache's history gets
// 200 and one ERROR event with a 410 Expired Status, after which a relist
// and a new watch work. The server compacts every 3 s here
// (--etcd-compaction-interval) instead of 5 min; the watch cache keeps its
// window regardless, as kube-apiserver's does.
func TestWatchResumeAndExpiry(t *testing.T) {
	srv := startServer(t, t.TempDir(), "--etcd-compaction-interval=3s")
	cs := clientFor(t, srv.Kubeconfig)
	ctx := ctxFor(t, 2*time.Minute)
	ns := namespaceName(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listRV := list.ResourceVersion

	// Created after the list and before the watch: the watch replays it.
	before, err := cms.Create(ctx, configMap("before", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
	if err != nil {
		t.Fatalf("watch from the list's resourceVersion %s: %v", listRV, err)
	}
	defer w.Stop()
	if cm := wantEvent(t, w, watch.Added, "before"); cm.ResourceVersion != before.ResourceVersion {
		t.Errorf("replayed ADDED has resourceVersion %s, the create answered %s", cm.ResourceVersion, before.ResourceVersion)
	}
	after, err := cms.Create(ctx, configMap("after", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w, watch.Added, "after")
	after.Data["index"] = "2"
	if _, err := cms.Update(ctx, after, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if cm := wantEvent(t, w, watch.Modified, "after"); cm.Data["index"] != "2" {
		t.Errorf("MODIFIED carries data %v", cm.Data)
	}
	if err := cms.Delete(ctx, "after", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w, watch.Deleted, "after")
	w.Stop()

	// A watch from the create's resourceVersion starts after it.
	w2, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w2, watch.Added, "after")
	wantEvent(t, w2, watch.Modified, "after")
	wantEvent(t, w2, watch.Deleted, "after")
	w2.Stop()

	// A resourceVersion from before the watch cache's history (it starts
	// when the API server's own controllers first watch ConfigMaps, at
	// start-up) expires, as kube-apiserver's cacher answers: 200 and one
	// ERROR event with a 410 Expired Status (docs/apiserver.md, "Watch").
	const oldRV = "1"
	w3, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: oldRV})
	if err != nil {
		t.Fatalf("watch from %s: %v (want 200 and an ERROR event)", oldRV, err)
	}
	ev := nextEvent(t, w3, 10*time.Second)
	status, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok {
		t.Fatalf("watch from %s starts with %s %#v, want ERROR and a Status", oldRV, ev.Type, ev.Object)
	}
	if _, open := <-w3.ResultChan(); open {
		t.Errorf("the watch went on after its ERROR event")
	}
	if status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired || status.Status != metav1.StatusFailure ||
		!strings.HasPrefix(status.Message, "too old resource version: "+oldRV) {
		t.Errorf("ERROR event Status %+v, want code 410, reason Expired, a message naming resourceVersion %s", status, oldRV)
	}
	t.Logf("watch from resourceVersion %s: ERROR %d %s: %s", oldRV, status.Code, status.Reason, status.Message)

	// What an informer does next: relist, and watch from the new list.
	list, err = cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "before" {
		t.Errorf("relist: %d items, want just before", len(list.Items))
	}
	w4, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w4.Stop()
	if _, err := cms.Create(ctx, configMap("relisted", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w4, watch.Added, "relisted")

	// A graceful stop does not wait for open watches: they end, and the
	// server exits 0 well within its 30 s shutdown budget.
	start := time.Now()
	srv.stopOK(t)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("SIGTERM with a watch open took %v", d)
	}
	select {
	case ev, open := <-w4.ResultChan():
		if open {
			t.Errorf("after the server stopped the watch delivered %s", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Error("the watch is still open 10 s after the server stopped")
	}
}
