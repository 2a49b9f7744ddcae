package apiserver

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/watchcache"
)

// TestWatchEventFor checks the enter/leave decision of a filtered watch
// against upstream's (k8s.io/apiserver cacher convertToWatchEvent, etcd3
// watcher transform), one storage event at a time.
func TestWatchEventFor(t *testing.T) {
	t.Parallel()
	res, ok := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if !ok {
		t.Fatal("no pods resource")
	}
	podJSON := func(sel string, phase corev1.PodPhase) []byte {
		p := corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"sel": sel}},
			Status:     corev1.PodStatus{Phase: phase},
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	in, out := podJSON("yes", corev1.PodRunning), podJSON("no", corev1.PodRunning)
	done := podJSON("yes", corev1.PodSucceeded)
	const rev = 42
	event := func(typ storage.EventType, cur, prev []byte) storage.Event {
		kv := storage.KV{Key: "pods/ns/p", Value: cur, ModRevision: rev, CreateRevision: 7}
		if typ == storage.Deleted {
			kv.Value = prev
		}
		return storage.Event{Type: typ, KV: kv, PrevValue: prev}
	}
	for _, tc := range []struct {
		name      string
		label     string
		field     string
		ev        storage.Event
		want      string // "" = not sent
		wantLabel string // the label of the object sent: says which of the two it is
		wantPhase corev1.PodPhase
	}{
		{"unfiltered add", "", "", event(storage.Added, out, nil), "ADDED", "no", corev1.PodRunning},
		{"unfiltered modify", "", "", event(storage.Modified, out, in), "MODIFIED", "no", corev1.PodRunning},
		{"unfiltered delete", "", "", event(storage.Deleted, nil, in), "DELETED", "yes", corev1.PodRunning},
		{"created matching", "sel=yes", "", event(storage.Added, in, nil), "ADDED", "yes", corev1.PodRunning},
		{"created outside", "sel=yes", "", event(storage.Added, out, nil), "", "", ""},
		{"label enters", "sel=yes", "", event(storage.Modified, in, out), "ADDED", "yes", corev1.PodRunning},
		{"label stays", "sel=yes", "", event(storage.Modified, in, in), "MODIFIED", "yes", corev1.PodRunning},
		// Upstream sends the object as it was before it left, at the
		// event's resourceVersion.
		{"label leaves", "sel=yes", "", event(storage.Modified, out, in), "DELETED", "yes", corev1.PodRunning},
		{"label stays outside", "sel=yes", "", event(storage.Modified, out, out), "", "", ""},
		{"deleted matching", "sel=yes", "", event(storage.Deleted, nil, in), "DELETED", "yes", corev1.PodRunning},
		{"deleted outside", "sel=yes", "", event(storage.Deleted, nil, out), "", "", ""},
		{"phase leaves", "", "status.phase!=Succeeded", event(storage.Modified, done, in), "DELETED", "yes", corev1.PodRunning},
		{"phase enters", "", "status.phase=Succeeded", event(storage.Modified, done, in), "ADDED", "yes", corev1.PodSucceeded},
		{"finished pod deleted", "", "status.phase!=Succeeded", event(storage.Deleted, nil, done), "", "", ""},
		{"label and field both", "sel=yes", "status.phase!=Succeeded", event(storage.Modified, done, out), "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := parseFilter(res, tc.label, tc.field)
			if err != nil {
				t.Fatal(err)
			}
			typ, obj, err := watchEventFor(res, f, watchcache.NewEvent(tc.ev, func(kv storage.KV) (any, error) { return store.Decode(&res.Resource, kv) }))
			if err != nil {
				t.Fatal(err)
			}
			if typ != tc.want || (obj == nil) != (tc.want == "") {
				t.Fatalf("event %q (object %v), want %q", typ, obj != nil, tc.want)
			}
			if obj == nil {
				return
			}
			m := store.Accessor(obj)
			if m.GetLabels()["sel"] != tc.wantLabel {
				t.Errorf("sent object labelled sel=%q, want %q", m.GetLabels()["sel"], tc.wantLabel)
			}
			if rv := m.GetResourceVersion(); rv != "42" {
				t.Errorf("resourceVersion %s, want the event's, 42", rv)
			}
			raw, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var p corev1.Pod
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			if p.Status.Phase != tc.wantPhase {
				t.Errorf("sent object in phase %s, want %s", p.Status.Phase, tc.wantPhase)
			}
		})
	}
}
