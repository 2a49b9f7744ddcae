package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/podfiles"
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

// crashWriter is one client of the burst in TestCrashUpKeepsPodsAndFiles:
// it creates objects of one kind until a create fails, and keeps the names
// answered 201 and the one in flight when the server went.
type crashWriter struct {
	kind     string // "pods" or "configmaps"
	prefix   string
	limit    int // most creates; bounds the pods to the nodes' room
	acked    []string
	inFlight string
	err      error // a failure before the kill
}

func (w *crashWriter) run(ctx context.Context, cs *kubernetes.Clientset, ns string, killing *atomic.Bool, count *atomic.Int64) {
	client := cs.CoreV1().RESTClient()
	for i := 0; i < w.limit; i++ {
		name := fmt.Sprintf("%s-%04d", w.prefix, i)
		var obj any = configMap(name, i)
		if w.kind == "pods" {
			obj = &corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"stream": "crash"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example"}}},
			}
		}
		body, err := json.Marshal(obj)
		if err != nil {
			w.err = err
			return
		}
		reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var code int
		res := client.Post().Namespace(ns).Resource(w.kind).SetHeader("Content-Type", "application/json").
			Body(body).Do(reqCtx).StatusCode(&code)
		cancel()
		if err := res.Error(); err != nil {
			if !killing.Load() {
				w.err = fmt.Errorf("create %s %s before the kill: %w", w.kind, name, err)
			}
			w.inFlight = name
			return
		}
		if code != http.StatusCreated {
			w.err = fmt.Errorf("create %s %s: status %d, want 201", w.kind, name, code)
			return
		}
		w.acked = append(w.acked, name)
		count.Add(1)
	}
}

// TestCrashUpKeepsPodsAndFiles is TestCrashKeepsAcknowledgedCreates for
// the whole of `up --nodes 3` (issue 21, "Tests"): SIGKILL in the middle of
// a burst of pod and ConfigMap creates from four clients, while the
// scheduler binds the pods and the agents give them IPs and files. After a
// restart with the same flags every create answered 201 is there, at most
// each client's create in flight besides; every pod is bound, running, and
// its resolv.conf (naming its node's cache) is back within seconds; no two
// pods share an IP, each IP is in its node's pod CIDR, and no node keeps
// files of a pod it does not run.
func TestCrashUpKeepsPodsAndFiles(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	c := startNodesUp(t, 3, 57, 58)
	cs := clientFor(t, c.Kubeconfig)
	ctx := ctxFor(t, 4*time.Minute)
	ns := namespaceName(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 2 × 200 pods fit the nodes (253 IPs each); the kill comes once 150
	// creates are acknowledged, so it falls in the burst on a fast or a
	// loaded machine alike.
	writers := []*crashWriter{
		{kind: "pods", prefix: "pod-a", limit: 200}, {kind: "pods", prefix: "pod-b", limit: 200},
		{kind: "configmaps", prefix: "cm-a", limit: 1 << 20}, {kind: "configmaps", prefix: "cm-b", limit: 1 << 20},
	}
	var killing atomic.Bool
	var count atomic.Int64
	var wg sync.WaitGroup
	for _, w := range writers {
		wg.Go(func() { w.run(ctx, cs, ns, &killing, &count) })
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return count.Load() >= 150, nil
	}); err != nil {
		t.Fatalf("150 creates not acknowledged within a minute: %d", count.Load())
	}
	bound, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!="})
	if err != nil {
		t.Fatal(err)
	}
	killing.Store(true)
	c.kill()
	wg.Wait()
	acked := map[string]map[string]bool{"pods": {}, "configmaps": {}}
	inFlight := map[string]bool{}
	for _, w := range writers {
		if w.err != nil {
			t.Error(w.err)
		}
		for _, n := range w.acked {
			acked[w.kind][n] = true
		}
		if w.inFlight != "" {
			inFlight[w.inFlight] = true
		}
	}
	t.Logf("SIGKILL after %d pods and %d ConfigMaps acknowledged (201), %d pods bound a moment before; in flight: %v",
		len(acked["pods"]), len(acked["configmaps"]), len(bound.Items), inFlight)
	if len(acked["pods"]) == 0 || len(acked["configmaps"]) == 0 {
		t.Fatal("the kill came before both kinds were acknowledged")
	}

	ready := c.again(t)
	restarted := time.Now()
	cs = clientFor(t, c.Kubeconfig)

	// What was acknowledged is there; nothing else but what was in flight.
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "stream=crash"})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]map[string]bool{"pods": {}, "configmaps": {}}
	for _, p := range pods.Items {
		stored["pods"][p.Name] = true
	}
	for _, cm := range cms.Items {
		stored["configmaps"][cm.Name] = true
	}
	for kind, names := range acked {
		for n := range names {
			if !stored[kind][n] {
				t.Errorf("acknowledged %s %s is gone after the restart", kind, n)
			}
		}
		for n := range stored[kind] {
			if !names[n] && !inFlight[n] {
				t.Errorf("%s %s after the restart: nobody created it", kind, n)
			}
		}
	}

	// The pods bound before the kill have their files as soon as their
	// node's agent has synced; every pod is bound and running soon after.
	boundBefore := map[string]bool{}
	for _, p := range bound.Items {
		boundBefore[p.Name] = true
	}
	var boundBack time.Duration
	var last []corev1.Pod
	waitUntil(t, 2*time.Minute, "every pod bound, running, with its resolv.conf", func(ctx context.Context) (bool, string) {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		last = list.Items
		missing, waiting := 0, 0
		var first string
		for i := range list.Items {
			p := &list.Items[i]
			ok := p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != ""
			if ok {
				if _, err := c.checkResolvConf(p); err != nil {
					ok = false
					if first == "" {
						first = err.Error()
					}
				}
			}
			switch {
			case ok:
			case boundBefore[p.Name]:
				missing++
			default:
				waiting++
			}
		}
		if missing == 0 && boundBack == 0 {
			boundBack = time.Since(restarted)
		}
		return missing == 0 && waiting == 0, fmt.Sprintf("%d pods bound before the kill and %d others not yet running with their resolv.conf (%s)", missing, waiting, first)
	})
	allBack := time.Since(restarted)
	t.Logf("restart: banner in %v; then the %d pods bound before the kill had their resolv.conf in %v, all %d pods in %v",
		ready.Round(time.Millisecond), len(bound.Items), boundBack.Round(time.Millisecond), len(last), allBack.Round(time.Millisecond))

	// Nothing inconsistent: one IP per pod, in its node's range, and each
	// node's state dir has the files of exactly its own pods.
	cidrOf := map[string]netip.Prefix{}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if pfx, err := netip.ParsePrefix(n.Spec.PodCIDR); err == nil {
			cidrOf[n.Name] = pfx
		}
	}
	owner := map[string]string{}
	dirs := map[string][]string{}
	for _, p := range last {
		if o, dup := owner[p.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share IP %s", o, p.Name, p.Status.PodIP)
		}
		owner[p.Status.PodIP] = p.Name
		if ip, err := netip.ParseAddr(p.Status.PodIP); err != nil || !cidrOf[p.Spec.NodeName].Contains(ip) {
			t.Errorf("pod %s on %s has IP %s, outside the node's pod CIDR %s", p.Name, p.Spec.NodeName, p.Status.PodIP, cidrOf[p.Spec.NodeName])
		}
		dirs[p.Spec.NodeName] = append(dirs[p.Spec.NodeName], podfiles.DirName(p.Namespace, p.Name, p.UID))
	}
	for _, node := range c.nodes {
		want := dirs[node]
		slices.Sort(want)
		waitUntil(t, time.Minute, node+"'s pod directories are its pods'", func(context.Context) (bool, string) {
			entries, err := os.ReadDir(podfiles.PodsDir(filepath.Join(c.DataDir, "nodes", node)))
			if err != nil && !os.IsNotExist(err) {
				return false, err.Error()
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			slices.Sort(got)
			return slices.Equal(got, want), fmt.Sprintf("%d directories, %d pods", len(got), len(want))
		})
	}
}
