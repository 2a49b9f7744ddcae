package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// These tests hold dnsplane's watch to kube-apiserver's selector semantics
// (docs/apiserver.md, "Watch"): an object entering a watch's selection is
// ADDED, one leaving it DELETED, one outside it before and after not sent.

// want is one expected watch event: its type, the object's name and a check
// of the object sent.
type want struct {
	typ   watch.EventType
	name  string
	check func(t *testing.T, p *corev1.Pod)
}

// expectEvents reads len(wants) events from w, each the next one but
// bookmarks, and fails on any other; the caller ends a sequence that must
// send nothing with a write that does, so "no event" needs no sleep.
func expectEvents(t *testing.T, w watch.Interface, wants ...want) {
	t.Helper()
	for i, wt := range wants {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("event %d: watch closed, want %s %s", i, wt.typ, wt.name)
			}
			for ev.Type == watch.Bookmark {
				if ev, ok = <-w.ResultChan(); !ok {
					t.Fatalf("event %d: watch closed, want %s %s", i, wt.typ, wt.name)
				}
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				t.Fatalf("event %d: %s %T, want %s of pod %s", i, ev.Type, ev.Object, wt.typ, wt.name)
			}
			if ev.Type != wt.typ || p.Name != wt.name {
				t.Fatalf("event %d: %s %s (labels %v, phase %s), want %s %s", i, ev.Type, p.Name, p.Labels, p.Status.Phase, wt.typ, wt.name)
			}
			if wt.check != nil {
				wt.check(t, p)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d: none, want %s %s", i, wt.typ, wt.name)
		}
	}
}

func labelled(v string) func(*testing.T, *corev1.Pod) {
	return func(t *testing.T, p *corev1.Pod) {
		t.Helper()
		if p.Labels["sel"] != v {
			t.Errorf("%s sent with sel=%q, want %q", p.Name, p.Labels["sel"], v)
		}
	}
}

func atRevision(rv string, check func(*testing.T, *corev1.Pod)) func(*testing.T, *corev1.Pod) {
	return func(t *testing.T, p *corev1.Pod) {
		t.Helper()
		if p.ResourceVersion != rv {
			t.Errorf("%s sent at resourceVersion %s, want the write's %s", p.Name, p.ResourceVersion, rv)
		}
		if check != nil {
			check(t, p)
		}
	}
}

func setLabel(ctx context.Context, t *testing.T, c kubernetes.Interface, ns, name, v string) *corev1.Pod {
	t.Helper()
	p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["sel"] = v
	p, err = c.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func setPhase(ctx context.Context, t *testing.T, c kubernetes.Interface, ns, name string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	p, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func labelledPod(name, sel, node string) *corev1.Pod {
	p := pod(name)
	p.Labels["sel"] = sel
	p.Spec.NodeName = node
	return p
}

func TestWatchLabelSelectorTransitions(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "sel=yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if _, err := pods.Create(ctx, labelledPod("a", "no", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	entered := setLabel(ctx, t, ts.client, ns, "a", "yes")
	// A no-op update writes nothing, so sends nothing: the MODIFIED below is
	// the annotation's.
	setLabel(ctx, t, ts.client, ns, "a", "yes")
	p, err := pods.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Annotations = map[string]string{"touched": "1"}
	stayed, err := pods.Update(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	left := setLabel(ctx, t, ts.client, ns, "a", "no")
	expectEvents(t, w,
		want{watch.Added, "a", atRevision(entered.ResourceVersion, labelled("yes"))},
		want{watch.Modified, "a", atRevision(stayed.ResourceVersion, labelled("yes"))},
		// The object as it was before it left, at the leaving write's
		// resourceVersion, as kube-apiserver's cacher sends it.
		want{watch.Deleted, "a", atRevision(left.ResourceVersion, labelled("yes"))},
	)

	// Deleting an object outside the selection sends nothing: the next
	// event is the sentinel's.
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, labelledPod("sentinel", "yes", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, w, want{watch.Added, "sentinel", labelled("yes")})
}

func TestWatchFieldSelectorTransitions(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	// kube-scheduler's and the kubelet's pod watches.
	running, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Stop()
	finished, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "status.phase=Succeeded"})
	if err != nil {
		t.Fatal(err)
	}
	defer finished.Stop()
	onNode, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer onNode.Stop()

	if _, err := pods.Create(ctx, labelledPod("a", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Scheduling moves the pod into the node's watch.
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setPhase(ctx, t, ts.client, ns, "a", corev1.PodRunning)
	done := setPhase(ctx, t, ts.client, ns, "a", corev1.PodSucceeded)
	phase := func(want corev1.PodPhase) func(*testing.T, *corev1.Pod) {
		return func(t *testing.T, p *corev1.Pod) {
			t.Helper()
			if p.Status.Phase != want {
				t.Errorf("%s sent in phase %s, want %s", p.Name, p.Status.Phase, want)
			}
		}
	}
	expectEvents(t, running,
		want{watch.Added, "a", phase(corev1.PodPending)},
		want{watch.Modified, "a", phase(corev1.PodPending)}, // bound
		want{watch.Modified, "a", phase(corev1.PodRunning)},
		want{watch.Deleted, "a", atRevision(done.ResourceVersion, phase(corev1.PodRunning))},
	)
	expectEvents(t, finished, want{watch.Added, "a", atRevision(done.ResourceVersion, phase(corev1.PodSucceeded))})
	expectEvents(t, onNode,
		want{watch.Added, "a", func(t *testing.T, p *corev1.Pod) {
			t.Helper()
			if p.Spec.NodeName != "node-1" {
				t.Errorf("sent with nodeName %q", p.Spec.NodeName)
			}
		}},
		want{watch.Modified, "a", phase(corev1.PodRunning)},
		want{watch.Modified, "a", phase(corev1.PodSucceeded)},
	)

	// A finished pod is deleted at once (grace 0: marked, then removed);
	// only the watches it is in see it go.
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, labelledPod("sentinel", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, running, want{watch.Added, "sentinel", nil})
	for _, w := range []watch.Interface{finished, onNode} {
		expectEvents(t, w, want{watch.Modified, "a", phase(corev1.PodSucceeded)}, want{watch.Deleted, "a", phase(corev1.PodSucceeded)})
	}
}

func TestWatchGracefulPodDelete(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "sel=yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := pods.Create(ctx, labelledPod("a", "yes", "node-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The kubelet's first delete marks the pod; its second, once the
	// containers are gone, removes it.
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	// A pod no node runs goes at once, yet as upstream's does: marked
	// (grace 0), then removed.
	if _, err := pods.Create(ctx, labelledPod("b", "yes", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	marked := func(grace int64) func(*testing.T, *corev1.Pod) {
		return func(t *testing.T, p *corev1.Pod) {
			t.Helper()
			if p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != grace {
				t.Errorf("%s sent with deletionTimestamp %v, deletionGracePeriodSeconds %v; want both, %ds", p.Name, p.DeletionTimestamp, p.DeletionGracePeriodSeconds, grace)
			}
		}
	}
	expectEvents(t, w,
		want{watch.Added, "a", nil},
		want{watch.Modified, "a", marked(corev1.DefaultTerminationGracePeriodSeconds)},
		want{watch.Modified, "a", marked(0)},
		want{watch.Deleted, "a", marked(0)},
		want{watch.Added, "b", nil},
		want{watch.Modified, "b", marked(0)},
		want{watch.Deleted, "b", marked(0)},
	)
}

// TestWatchListInitialEventsSelected checks that a watch-list's initial
// events (sendInitialEvents, client-go's default instead of LIST) hold the
// selected objects only, then the bookmark that ends them.
func TestWatchListInitialEventsSelected(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	for _, p := range []*corev1.Pod{labelledPod("in", "yes", ""), labelledPod("out", "no", "")} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{
		LabelSelector: "sel=yes", SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expectEvents(t, w, want{watch.Added, "in", labelled("yes")})
	select {
	case ev := <-w.ResultChan():
		p, _ := ev.Object.(*corev1.Pod)
		if ev.Type != watch.Bookmark || p == nil || p.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Fatalf("after the initial events: %s %#v, want the initial-events-end bookmark", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no initial-events-end bookmark")
	}
	setLabel(ctx, t, ts.client, ns, "out", "yes")
	setLabel(ctx, t, ts.client, ns, "in", "no")
	expectEvents(t, w, want{watch.Added, "out", labelled("yes")}, want{watch.Deleted, "in", labelled("yes")})
}

// TestMetadataWatchSelectorTransitions: a metadata-only watch (as the
// garbage collector's) sees the same transitions, as PartialObjectMetadata.
func TestMetadataWatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(t, ts.client)
	mc, err := metadata.NewForConfig(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := mc.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "sel=yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := ts.client.CoreV1().Pods(ns).Create(ctx, labelledPod("a", "no", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setLabel(ctx, t, ts.client, ns, "a", "yes")
	left := setLabel(ctx, t, ts.client, ns, "a", "no")
	for _, wt := range []struct {
		typ watch.EventType
		rv  string
	}{{watch.Added, ""}, {watch.Deleted, left.ResourceVersion}} {
		select {
		case ev := <-w.ResultChan():
			m, ok := ev.Object.(*metav1.PartialObjectMetadata)
			if !ok || ev.Type != wt.typ || m.Name != "a" || m.Labels["sel"] != "yes" {
				t.Fatalf("event %s %#v, want %s of a labelled sel=yes", ev.Type, ev.Object, wt.typ)
			}
			if wt.rv != "" && m.ResourceVersion != wt.rv {
				t.Errorf("%s at resourceVersion %s, want %s", wt.typ, m.ResourceVersion, wt.rv)
			}
		case <-ctx.Done():
			t.Fatalf("no %s event", wt.typ)
		}
	}
}

// recorder collects an informer's handler calls.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) has(e string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, got := range r.events {
		if got == e {
			return true
		}
	}
	return false
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.events)
}

func (r *recorder) handler() cache.ResourceEventHandler {
	name := func(o any) string {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		return o.(*corev1.Pod).Name
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.add("add %s", name(o)) },
		UpdateFunc: func(_, o any) { r.add("update %s", name(o)) },
		DeleteFunc: func(o any) { r.add("delete %s", name(o)) },
	}
}

// TestInformerSelectorTransitions runs client-go informers with the
// selectors controllers use: a pod leaving the selection must leave the
// informer's store through its delete handler (kube-scheduler frees a
// Succeeded pod's node capacity on that delete), one entering it arrives
// through the add handler.
func TestInformerSelectorTransitions(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)

	start := func(tweak func(*metav1.ListOptions)) (cache.SharedIndexInformer, *recorder) {
		factory := informers.NewSharedInformerFactoryWithOptions(ts.client, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(tweak))
		inf := factory.Core().V1().Pods().Informer()
		rec := &recorder{}
		if _, err := inf.AddEventHandler(rec.handler()); err != nil {
			t.Fatal(err)
		}
		factory.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("informer did not sync")
		}
		return inf, rec
	}
	byLabel, labelRec := start(func(o *metav1.ListOptions) { o.LabelSelector = "sel=yes" })
	byPhase, phaseRec := start(func(o *metav1.ListOptions) { o.FieldSelector = "status.phase!=Succeeded" })

	if _, err := pods.Create(ctx, labelledPod("a", "no", "node-1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setLabel(ctx, t, ts.client, ns, "a", "yes")
	setLabel(ctx, t, ts.client, ns, "a", "no")
	setPhase(ctx, t, ts.client, ns, "a", corev1.PodRunning)
	setPhase(ctx, t, ts.client, ns, "a", corev1.PodSucceeded)

	inStore := func(inf cache.SharedIndexInformer) bool {
		_, exists, err := inf.GetStore().GetByKey(ns + "/a")
		if err != nil {
			t.Fatal(err)
		}
		return exists
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		return labelRec.has("delete a") && phaseRec.has("delete a"), nil
	})
	if err != nil {
		t.Fatalf("handlers saw: label informer %v, phase informer %v; want a delete of a in each", labelRec, phaseRec)
	}
	if got, want := labelRec.String(), "[add a delete a]"; got != want {
		t.Errorf("label informer saw %s, want %s", got, want)
	}
	if got, want := phaseRec.String(), "[add a update a update a update a delete a]"; got != want {
		t.Errorf("phase informer saw %s, want %s", got, want)
	}
	if inStore(byLabel) || inStore(byPhase) {
		t.Errorf("a pod outside the selectors is still in a store: label %v, phase %v", inStore(byLabel), inStore(byPhase))
	}
}

// TestTableWatchSelectorTransitions: kubectl get -w asks for Tables; it
// sees an object leave its selection as a DELETED row too.
func TestTableWatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(t, ts.client)
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"watch": {"true"}, "labelSelector": {"sel=yes"}, "includeObject": {"Metadata"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.config.Host+"/api/v1/namespaces/"+ns+"/pods?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := ts.client.CoreV1().Pods(ns).Create(ctx, labelledPod("a", "no", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setLabel(ctx, t, ts.client, ns, "a", "yes")
	left := setLabel(ctx, t, ts.client, ns, "a", "no")
	dec := json.NewDecoder(resp.Body)
	for _, wt := range []struct {
		typ watch.EventType
		rv  string
	}{{watch.Added, ""}, {watch.Deleted, left.ResourceVersion}} {
		var ev struct {
			Type   watch.EventType `json:"type"`
			Object metav1.Table    `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("reading the %s event: %v", wt.typ, err)
		}
		if ev.Type != wt.typ || ev.Object.Kind != "Table" || len(ev.Object.Rows) != 1 {
			t.Fatalf("event %s %s with %d rows, want %s of a one-row Table", ev.Type, ev.Object.Kind, len(ev.Object.Rows), wt.typ)
		}
		var m metav1.PartialObjectMetadata
		if err := json.Unmarshal(ev.Object.Rows[0].Object.Raw, &m); err != nil {
			t.Fatal(err)
		}
		if m.Name != "a" || m.Labels["sel"] != "yes" || (wt.rv != "" && m.ResourceVersion != wt.rv) {
			t.Errorf("%s row for %s sel=%s at %s, want a sel=yes at %q", wt.typ, m.Name, m.Labels["sel"], m.ResourceVersion, wt.rv)
		}
	}
}
