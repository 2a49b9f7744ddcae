package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestCrashKeepsAcknowledgedCreates kills the server (SIGKILL) in the middle
// of a stream of ConfigMap creates, restarts it over the same data dir and
// checks that every create answered 201 is there, intact, and that at most
// the one create in flight at the kill was stored without an answer.
func TestCrashKeepsAcknowledgedCreates(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	cs := clientFor(t, srv.Kubeconfig)
	ctx := ctxFor(t, 2*time.Minute)
	ns := namespaceName(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	before, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The creates run until the kill, 1.5 s into the stream.
	var killing atomic.Bool
	crashed := srv
	time.AfterFunc(1500*time.Millisecond, func() {
		killing.Store(true)
		crashed.kill()
	})

	client := cs.CoreV1().RESTClient()
	var acked []string
	inFlight := ""
	for i := 0; ; i++ {
		name := fmt.Sprintf("cm-%06d", i)
		body, _ := json.Marshal(configMap(name, i))
		reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var code int
		res := client.Post().Namespace(ns).Resource("configmaps").SetHeader("Content-Type", "application/json").
			Body(body).Do(reqCtx).StatusCode(&code)
		cancel()
		if err := res.Error(); err != nil {
			if !killing.Load() {
				t.Fatalf("create %s failed before the kill: %v", name, err)
			}
			inFlight = name
			break
		}
		if code != http.StatusCreated {
			t.Fatalf("create %s: status %d, want 201", name, code)
		}
		acked = append(acked, name)
	}
	<-crashed.exited
	t.Logf("%d creates acknowledged (201) before the SIGKILL; %s was in flight", len(acked), inFlight)
	if len(acked) == 0 {
		t.Fatal("no create was acknowledged before the kill")
	}

	srv = startServer(t, dir)
	cs = clientFor(t, srv.Kubeconfig)
	for i, name := range acked {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("acknowledged create %s: %v", name, err)
			continue
		}
		if want := configMap(name, i); cm.Data["index"] != want.Data["index"] || cm.Data["payload"] != want.Data["payload"] || cm.UID == "" {
			t.Errorf("%s came back as %+v", name, cm)
		}
	}
	// List everything back in pages of 100 (limit + continue).
	stored := map[string]bool{}
	pages := 0
	for opts := (metav1.ListOptions{Limit: 100}); ; pages++ {
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
		if err != nil {
			t.Fatalf("listing after the restart (page %d): %v", pages, err)
		}
		if len(list.Items) > 100 {
			t.Fatalf("page %d has %d items, limit 100", pages, len(list.Items))
		}
		for _, cm := range list.Items {
			if stored[cm.Name] {
				t.Errorf("%s listed twice", cm.Name)
			}
			stored[cm.Name] = true
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	if want := (len(acked) + 99) / 100; pages+1 < want {
		t.Errorf("%d pages for %d ConfigMaps, want at least %d", pages+1, len(stored), want)
	}
	for _, name := range acked {
		delete(stored, name)
	}
	if stored[inFlight] {
		t.Logf("the create in flight at the kill (%s) was committed", inFlight)
	}
	delete(stored, inFlight) // it may or may not have been committed
	if len(stored) > 0 {
		t.Errorf("after the restart there are ConfigMaps nobody created: %v", stored)
	}
	// A resourceVersion from before the crash is older than the restarted
	// server's watch cache: a watch from it expires (410), as with
	// kube-apiserver, and the informer relists; a watch from the new list
	// goes on (docs/apiserver.md, "Watch").
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatalf("watch from resourceVersion %s of before the crash: %v", before.ResourceVersion, err)
	}
	if ev := nextEvent(t, w, 10*time.Second); ev.Type != watch.Error {
		t.Errorf("watch from before the crash starts with %s %#v, want ERROR (410)", ev.Type, ev.Object)
	} else if st, ok := ev.Object.(*metav1.Status); !ok || st.Code != http.StatusGone {
		t.Errorf("watch from before the crash: ERROR %#v, want a 410 Status", ev.Object)
	}
	w.Stop()
	relist, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	w, err = cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: relist.ResourceVersion})
	if err != nil {
		t.Fatalf("watch from the relist's resourceVersion %s: %v", relist.ResourceVersion, err)
	}
	defer w.Stop()

	// The server is usable after the crash.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("after-restart", -1), metav1.CreateOptions{}); err != nil {
		t.Errorf("create after the restart: %v", err)
	}
	wantEvent(t, w, watch.Added, "after-restart")
}

func configMap(name string, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"stream": "crash"}},
		Data:       map[string]string{"index": fmt.Sprint(i), "payload": fmt.Sprintf("%0512d", i)},
	}
}
