package controlplane_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// etcdCounter sums the in-process embedded etcd member's counter name
// (etcd registers its metrics with the default registry).
func etcdCounter(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	found := false
	for _, mf := range mfs {
		if mf.GetName() == name {
			found = true
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	if !found {
		t.Fatalf("etcd serves no %s", name)
	}
	return sum
}

// TestPodWriteEtcdReads holds pod creates, updates and deletes to a budget
// of etcd range requests each, counted by etcd itself
// (etcd_mvcc_range_total, which counts the compare of a transaction as a
// range): admission, authorization and authentication read informers, not
// storage (docs/apiserver.md, "Reads on the write path"). A create's one
// range is its transaction's "does not exist yet" compare, as in
// kube-apiserver. The budget allows a quarter of a read per request for
// what the control plane's own loops (leases, endpoints) read meanwhile;
// one extra read per request on the path fails it. Not parallel: etcd's
// counters are its package's, shared by every member in the process.
func TestPodWriteEtcdReads(t *testing.T) {
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	ctx := context.Background()
	const ns = "reads"
	if _, err := ts.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No client-side rate limit: 600 sequential writes at client-go's
	// default 5/s would take two minutes.
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.QPS = -1
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := client.CoreV1().Pods(ns)
	pod := func(i int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	const warm, n = 5, 200
	stored := make([]*corev1.Pod, warm+n)
	for _, tc := range []struct {
		op     string
		budget float64 // range requests per request, before the allowance
		do     func(i int) error
	}{
		{op: "create", budget: 1, do: func(i int) (err error) {
			stored[i], err = pods.Create(ctx, pod(i), metav1.CreateOptions{})
			return err
		}},
		// The current object, the transaction's compare, and the watch's
		// previous value: the watch cache's etcd watch asks for previous values: etcd
		// reads the one an update replaces to send it.
		{op: "update", budget: 3, do: func(i int) (err error) {
			p := stored[i].DeepCopy()
			p.Labels = map[string]string{"updated": "yes"}
			stored[i], err = pods.Update(ctx, p, metav1.UpdateOptions{})
			return err
		}},
		// The current object, then the graceful delete's update (its
		// compare and the watch's previous value) and the delete (its
		// compare, the previous value it returns, the watch's): an
		// unscheduled pod is deleted at once.
		{op: "delete", budget: 6, do: func(i int) error {
			return pods.Delete(ctx, stored[i].Name, metav1.DeleteOptions{})
		}},
	} {
		for i := range warm {
			if err := tc.do(i); err != nil {
				t.Fatalf("%s %d: %v", tc.op, i, err)
			}
		}
		before := etcdCounter(t, "etcd_mvcc_range_total")
		for i := warm; i < warm+n; i++ {
			if err := tc.do(i); err != nil {
				t.Fatalf("%s %d: %v", tc.op, i, err)
			}
		}
		perRequest := (etcdCounter(t, "etcd_mvcc_range_total") - before) / n
		t.Logf("pod %s: %.2f etcd range requests each (budget %.0f)", tc.op, perRequest, tc.budget)
		if perRequest > tc.budget+0.25 {
			t.Errorf("pod %s: %.2f etcd range requests each, over its budget of %.0f", tc.op, perRequest, tc.budget)
		}
	}
}
