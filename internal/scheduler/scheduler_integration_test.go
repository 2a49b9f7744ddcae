package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/scheduler"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// running is a Scheduler's Run in a goroutine.
type running struct {
	t      *testing.T
	name   string
	cancel context.CancelFunc
	done   chan error
	err    error
	ended  bool
}

// started runs c until the test ends; Run must return once stopped.
func started(t *testing.T, name string, c *scheduler.Scheduler) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, name: name, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() {
		if err := r.stop(); err != nil && !errors.Is(err, scheduler.ErrLeaseLost) {
			t.Errorf("scheduler %s: Run: %v", name, err)
		}
	})
	return r
}

// stop cancels Run's context and returns its error.
func (r *running) stop() error {
	r.cancel()
	return r.wait()
}

// wait returns Run's error once it has returned, failing the test if it
// does not within 30 s.
func (r *running) wait() error {
	r.t.Helper()
	if r.ended {
		return r.err
	}
	select {
	case r.err = <-r.done:
		r.ended = true
	case <-time.After(30 * time.Second):
		r.t.Fatalf("scheduler %s: Run did not return within 30s", r.name)
	}
	return r.err
}

func testLogger(t *testing.T) *slog.Logger {
	t.Helper()
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// readyNode creates a Node as the agent (or a kubelet) registers one:
// Ready, with allocatable capacity.
func readyNode(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	_, err := c.CoreV1().Nodes().Create(context.Background(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func pod(name string, cpu string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return p
}

func bound(c kubernetes.Interface, ns, name string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Spec.NodeName != "", nil
	}
}

// event finds the events.k8s.io Event the scheduler reports about a pod.
func event(ctx context.Context, c kubernetes.Interface, ns, podName, reason string) (string, bool, error) {
	list, err := c.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", false, err
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "Pod" && e.Regarding.Name == podName && e.Reason == reason {
			return e.Note, true, nil
		}
	}
	return "", false, nil
}

func namespace(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestSchedules: kube-scheduler's default profile against dnsplane's API
// server binds a pod to the Ready node with a Scheduled event, leaves one
// that fits nowhere Pending with FailedScheduling and PodScheduled=False,
// and stops when its context ends.
func TestSchedules(t *testing.T) {
	t.Parallel()
	srv := controlplanetest.StartTestServer(t, controlplane.Config{})
	c := srv.Client
	ctx := context.Background()
	readyNode(t, c, "node-a")
	ns := namespace(t, c, "sched")
	r := started(t, "default", &scheduler.Scheduler{Kubeconfig: srv.Kubeconfig, Logger: testLogger(t)})

	if _, err := c.CoreV1().Pods(ns).Create(ctx, pod("fits", "100m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, pod("too-big", "64"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "pod bound", 90*time.Second, bound(c, ns, "fits"))
	p, err := c.CoreV1().Pods(ns).Get(ctx, "fits", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "node-a" {
		t.Errorf("pod bound to %q, want node-a", p.Spec.NodeName)
	}
	testkit.Poll(t, "Scheduled event", 90*time.Second, func(ctx context.Context) (bool, error) {
		note, ok, err := event(ctx, c, ns, "fits", "Scheduled")
		if ok && !strings.Contains(note, "Successfully assigned "+ns+"/fits to node-a") {
			return false, fmt.Errorf("the Scheduled event says %q", note)
		}
		return ok, err
	})

	const wantMsg = "0/1 nodes are available: 1 Insufficient cpu."
	testkit.Poll(t, "PodScheduled=False", 90*time.Second, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, "too-big", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
				if cond.Reason != corev1.PodReasonUnschedulable || !strings.HasPrefix(cond.Message, wantMsg) {
					return false, fmt.Errorf("condition PodScheduled=False %s: %q; want %s: %q", cond.Reason, cond.Message, corev1.PodReasonUnschedulable, wantMsg)
				}
				return true, nil
			}
		}
		return false, nil
	})
	testkit.Poll(t, "FailedScheduling event", 90*time.Second, func(ctx context.Context) (bool, error) {
		note, ok, err := event(ctx, c, ns, "too-big", "FailedScheduling")
		if ok && !strings.HasPrefix(note, wantMsg) {
			return false, fmt.Errorf("the FailedScheduling event says %q; want %q", note, wantMsg)
		}
		if ok {
			t.Logf("FailedScheduling: %s", note)
		}
		return ok, err
	})
	if p, err := c.CoreV1().Pods(ns).Get(ctx, "too-big", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
		t.Errorf("unschedulable pod: node %q, phase %q, %v", p.Spec.NodeName, p.Status.Phase, err)
	}

	// Pod create to bound for a burst (docs/controllers.md): a log line,
	// not an assertion, on a shared machine.
	const burst = 100
	// client-go's default 5 requests a second would be what is measured.
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.QPS, cfg.Burst = 1000, 1000
	fast, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range burst {
		if _, err := fast.CoreV1().Pods(ns).Create(ctx, pod(fmt.Sprintf("burst-%d", i), ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	created := time.Since(start)
	testkit.Poll(t, "burst bound", 90*time.Second, func(ctx context.Context) (bool, error) {
		list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
		if err != nil {
			return false, err
		}
		return len(list.Items) == burst+1, nil
	})
	t.Logf("%d pods created in %v, all bound %v after the first create", burst, created, time.Since(start))

	if err := r.stop(); err != nil {
		t.Errorf("Run after its context ended: %v", err)
	}
}

// TestLeaderElection: two schedulers with --leader-elect share the Lease
// kube-system/kube-scheduler; one holds it and schedules; stopping it
// hands over to the other, which schedules; a scheduler whose lease is
// taken stops with ErrLeaseLost, as kube-scheduler exits.
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	srv := controlplanetest.StartTestServer(t, controlplane.Config{})
	c := srv.Client
	ctx := context.Background()
	readyNode(t, c, "node-a")
	ns := namespace(t, c, "elect")
	runs := map[string]*running{}
	for _, id := range []string{"a", "b"} {
		runs[id] = started(t, id, &scheduler.Scheduler{Kubeconfig: srv.Kubeconfig, Logger: testLogger(t).With("identity", id),
			LeaderElect: true, Identity: id})
	}
	holder := func(ctx context.Context) (string, error) {
		l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return ptr.Deref(l.Spec.HolderIdentity, ""), nil
	}
	var leader string
	testkit.Poll(t, "a leader", 90*time.Second, func(ctx context.Context) (bool, error) {
		h, err := holder(ctx)
		leader = h
		return h == "a" || h == "b", err
	})
	if _, err := c.CoreV1().Pods(ns).Create(ctx, pod("first", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "pod bound by the leader", 90*time.Second, bound(c, ns, "first"))
	testkit.Poll(t, "LeaderElection event", 90*time.Second, func(ctx context.Context) (bool, error) {
		list, err := c.EventsV1().Events("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Reason == "LeaderElection" && e.Regarding.Kind == "Lease" && e.Note == leader+" became leader" {
				return true, nil
			}
		}
		return false, nil
	})

	other := map[string]string{"a": "b", "b": "a"}[leader]
	if err := runs[leader].stop(); err != nil {
		t.Fatalf("leader %s stopped: %v", leader, err)
	}
	testkit.Poll(t, "the standby takes over", 90*time.Second, func(ctx context.Context) (bool, error) {
		h, err := holder(ctx)
		return h == other, err
	})
	if _, err := c.CoreV1().Pods(ns).Create(ctx, pod("second", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "pod bound by the new leader", 90*time.Second, bound(c, ns, "second"))

	// Another holder takes the lease: the leader cannot renew it and stops.
	l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.HolderIdentity = ptr.To("thief")
	l.Spec.LeaseDurationSeconds = ptr.To[int32](3600)
	l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if _, err := c.CoordinationV1().Leases("kube-system").Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := runs[other].wait(); !errors.Is(err, scheduler.ErrLeaseLost) {
		t.Errorf("Run of a leader that lost its lease returned %v; want %v", err, scheduler.ErrLeaseLost)
	}
}
