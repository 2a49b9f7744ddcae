package apiserver

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestPodSource: the server's own pod informer, fed in process, sees
// creates, updates and deletes as an HTTP informer would, with the pods'
// k8s.io/api view and no managed fields; a watch from a revision before
// the list is refused, and from the list's revision it streams.
func TestPodSource(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, t.TempDir(), "")
	t.Cleanup(func() { ts.stop(t) })
	ctx := context.Background()
	if err := ts.run.waitInformers(ctx); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	lister := ts.run.informers.Core().V1().Pods().Lister().Pods(ns)

	created, err := pods.Create(ctx, pod("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seen *corev1.Pod
	testkit.Poll(t, "the informer has the new pod", 10*time.Second, func(context.Context) (bool, error) {
		seen, err = lister.Get("web")
		return err == nil, nil
	})
	if seen.UID != created.UID || seen.Spec.Containers[0].Image != "nginx:1.27" || seen.ManagedFields != nil || seen.ResourceVersion != created.ResourceVersion {
		t.Errorf("informer's pod = %+v, created %+v", seen.ObjectMeta, created.ObjectMeta)
	}

	created.Labels["rev"] = "2"
	updated, err := pods.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "the informer has the update", 10*time.Second, func(context.Context) (bool, error) {
		p, err := lister.Get("web")
		return err == nil && p.ResourceVersion == updated.ResourceVersion && p.Labels["rev"] == "2", nil
	})

	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "the informer dropped the pod", 10*time.Second, func(context.Context) (bool, error) {
		_, err := lister.Get("web")
		return apierrors.IsNotFound(err), nil
	})

	src := &PodSource{}
	if _, err := src.List(metav1.ListOptions{}); err == nil {
		t.Error("a source not attached listed")
	}
	src.Attach(ts.run.Server)
	if _, err := src.List(metav1.ListOptions{LabelSelector: "app=web"}); err == nil {
		t.Error("a label selector was accepted")
	}
	list, err := src.List(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := src.Watch(metav1.ListOptions{ResourceVersion: list.(*corev1.PodList).ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := pods.Create(ctx, pod("after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if p, ok := ev.Object.(*corev1.Pod); ev.Type != watch.Added || !ok || p.Name != "after" {
			t.Errorf("first event %v %#v, want ADDED of pod after", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event after the list")
	}
}
