package coredns

// The cluster side of the workload interop tests: upstream's
// controllers run against the test API server, and pods made Running as a
// kubelet would make them, so that the EndpointSlices the DNS servers read
// are written the way a cluster writes them.

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	endpointcontroller "k8s.io/kubernetes/pkg/controller/endpoint"
	endpointslicecontroller "k8s.io/kubernetes/pkg/controller/endpointslice"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/utils/ptr"

	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
)

// startWorkloadControllers runs, against the API server of cfg, the
// upstream controllers that turn Pods and Services into what the cluster
// DNS serves: the EndpointSlice controller (what the kubernetes plugin
// reads), the Endpoints controller, and the StatefulSet controller (pod
// names, hostname and subdomain), each built as kube-controller-manager's
// new<Name>Controller builds it, with its default worker count and no
// update batching. A controller the test's control plane already runs
// (controllersrole.DeletionControllers, what controlplanetest.StartTestServer runs) is not
// started twice: two EndpointSlice controllers would each write slices for
// the same Service.
// They stop, and are waited for, when the test ends.
func startWorkloadControllers(t testing.TB, cfg *rest.Config) {
	t.Helper()
	running := map[string]bool{}
	for _, name := range controllersrole.DeletionControllers() {
		running[name] = true
	}
	// Their klog output (events, "Starting ...") is not the test's.
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.FromSlogHandler(slog.DiscardHandler)))
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 300
	// The Endpoints controller's every write draws kube's deprecation
	// warning for v1 Endpoints.
	cfg.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("controllers' client: %v", err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	var runs []func(context.Context)
	if !running[names.EndpointSliceController] {
		esc := endpointslicecontroller.NewController(ctx, factory.Core().V1().Pods(), factory.Core().V1().Services(),
			factory.Core().V1().Nodes(), factory.Discovery().V1().EndpointSlices(), 100, client, 0)
		runs = append(runs, func(ctx context.Context) { esc.Run(ctx, 5) })
	}
	if !running[names.EndpointsController] {
		ec := endpointcontroller.NewEndpointController(ctx, factory.Core().V1().Pods(), factory.Core().V1().Services(),
			factory.Core().V1().Endpoints(), client, 0)
		runs = append(runs, func(ctx context.Context) { ec.Run(ctx, 5) })
	}
	if !running[names.StatefulSetController] {
		ssc := statefulset.NewStatefulSetController(ctx, factory.Core().V1().Pods(), factory.Apps().V1().StatefulSets(),
			factory.Core().V1().PersistentVolumeClaims(), factory.Apps().V1().ControllerRevisions(), client)
		runs = append(runs, func(ctx context.Context) { ssc.Run(ctx, 5) })
	}
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Go(func() { run(ctx) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
	})
}

// interopPod is one Pod the test creates on its node and makes Running.
type interopPod struct {
	name, ip            string
	labels              map[string]string
	hostname, subdomain string
	ready               bool
}

// runStatefulPod waits for the StatefulSet controller to create pod name
// of StatefulSet web, checks the DNS names it gave it, binds it to node
// and makes it Running and Ready at ip.
func runStatefulPod(t testing.TB, ctx context.Context, cs kubernetes.Interface, ns, node, name, ip string) {
	t.Helper()
	var p *corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		p, err = cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the StatefulSet controller did not create pod %s: %v", name, err)
	}
	if p.Spec.Hostname != name || p.Spec.Subdomain != "web" {
		t.Errorf("pod %s: hostname %q, subdomain %q; the StatefulSet controller sets %q and %q", name, p.Spec.Hostname, p.Spec.Subdomain, name, "web")
	}
	// Bound as a scheduler would; one in the control plane may have been
	// first (the node it chose makes no difference to DNS).
	if p.Spec.NodeName == "" {
		if err := cs.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsConflict(err) {
			t.Fatalf("binding %s to %s: %v", name, node, err)
		}
	}
	setRunning(t, ctx, cs, ns, name, ip, true)
}

// setRunning writes pod ns/name's status as a kubelet does once its
// containers run: phase Running, the pod's IP, and the Ready condition
// ready says. It re-reads the pod when a controller's write came between
// (the StatefulSet controller owns some of them).
func setRunning(t testing.TB, ctx context.Context, cs kubernetes.Interface, ns, name, ip string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		p.Status = corev1.PodStatus{
			Phase:     corev1.PodRunning,
			PodIP:     ip,
			PodIPs:    []corev1.PodIP{{IP: ip}},
			HostIP:    "192.0.2.10",
			HostIPs:   []corev1.HostIP{{IP: "192.0.2.10"}},
			StartTime: &now,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: status, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: status, LastTransitionTime: now},
			},
		}
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("writing the status of pod %s/%s: %v", ns, name, err)
	}
}

// endpointDesc describes an endpoint as "IP ready|not-ready [hostname]".
func endpointDesc(ip string, ready bool, hostname string) string {
	s := ip + " not-ready"
	if ready {
		s = ip + " ready"
	}
	if hostname != "" {
		s += " " + hostname
	}
	return s
}

// waitForSlices polls until the EndpointSlices of Service svc hold
// exactly the endpoints want describes (endpointDesc).
func waitForSlices(t testing.TB, ctx context.Context, cs kubernetes.Interface, ns, svc string, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	sel := labels.Set{discoveryv1.LabelServiceName: svc}.String()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, nil
		}
		got = got[:0]
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				for _, a := range e.Addresses {
					got = append(got, endpointDesc(a, ptr.Deref(e.Conditions.Ready, false), ptr.Deref(e.Hostname, "")))
				}
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("EndpointSlices of %s/%s: got %q, want %q (%v)", ns, svc, got, want, err)
	}
}

// waitForEndpoints polls until the Endpoints of Service svc hold exactly
// the addresses want describes.
func waitForEndpoints(t testing.TB, ctx context.Context, cs kubernetes.Interface, ns, svc string, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var got []string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, svc, metav1.GetOptions{}) //nolint:staticcheck // the Endpoints controller's output, deprecated in v1.33 but still written
		if err != nil {
			return false, nil
		}
		got = got[:0]
		for _, s := range ep.Subsets {
			for _, a := range s.Addresses {
				got = append(got, endpointDesc(a.IP, true, a.Hostname))
			}
			for _, a := range s.NotReadyAddresses {
				got = append(got, endpointDesc(a.IP, false, a.Hostname))
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("Endpoints of %s/%s: got %q, want %q (%v)", ns, svc, got, want, err)
	}
}
