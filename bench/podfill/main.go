// Command podfill brings a namespace to N pods that each have a status.podIP,
// for benchmarks of DNS servers that watch pods (stock CoreDNS's
// `kubernetes { pods verified }`, which autopath needs):
//
//	go run ./bench/podfill --kubeconfig <path> --namespace fill --count 5000 --clients 8
//
// Pods are named fill-<i> for i in [0, count); ones that exist already are
// left alone, so a second run with a larger count adds the difference. Each
// pod is created, then its status is written through the status subresource
// (an API server, like kube-apiserver, drops status on create) with the pod
// IP 10.<i> spread over 10.64.0.0/10, never 127.0.0.1: the load
// generator's address belongs to the one pod the benchmark creates itself.
// It prints the pods created and the time taken; errors exit 1.
//
// With --node-name the pods are bound to that node instead and get no
// status: the node's agent gives them IPs and writes their files
// (bench/agent.sh). With --groups G pod i is also labelled group=g<i mod G>,
// so that G Services can each select a few of them (bench/up.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "podfill:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the server (required)")
	namespace := flag.String("namespace", "fill", "namespace of the pods; created if missing")
	count := flag.Int("count", 1000, "pods the namespace should have")
	clients := flag.Int("clients", 8, "concurrent requests")
	nodeName := flag.String("node-name", "", "bind the pods to this node (spec.nodeName) and leave their status to its agent")
	groups := flag.Int("groups", 0, "also label pod i group=g<i mod groups>, for Services that each select a few pods (0: no such label)")
	flag.Parse()
	if *kubeconfig == "" || *count < 0 || *count > 1<<20 || *clients < 1 || *groups < 0 {
		return errors.New("want --kubeconfig, --count in 0-1048576, --clients ≥ 1 and --groups ≥ 0")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	// No client-side rate limit: the point is to fill quickly.
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pods := cs.CoreV1().Pods(*namespace)
	start := time.Now()
	var next, created atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	for range *clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= *count || ctx.Err() != nil {
					return
				}
				ok, err := fill(ctx, pods, i, *nodeName, *groups)
				if err != nil {
					errs <- fmt.Errorf("pod fill-%d: %w", i, err)
					return
				}
				if ok {
					created.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fmt.Printf("created=%d count=%d seconds=%.1f\n", created.Load(), *count, time.Since(start).Seconds())
	return nil
}

type podClient interface {
	Create(context.Context, *corev1.Pod, metav1.CreateOptions) (*corev1.Pod, error)
	UpdateStatus(context.Context, *corev1.Pod, metav1.UpdateOptions) (*corev1.Pod, error)
}

// fill creates pod fill-i with its IP, or bound to node (no status) when
// node is set; false when it existed already. With groups > 0 the pod is
// also labelled group=g<i mod groups>.
func fill(ctx context.Context, pods podClient, i int, node string, groups int) (bool, error) {
	labels := map[string]string{"app": "podfill"}
	if groups > 0 {
		labels["group"] = fmt.Sprintf("g%d", i%groups)
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fill-%d", i), Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
		}}},
	}
	got, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	if err != nil || node != "" {
		return err == nil, err
	}
	ip := fmt.Sprintf("10.%d.%d.%d", 64+(i>>16)&63, (i>>8)&255, i&255)
	got.Status.Phase = corev1.PodRunning
	got.Status.PodIP = ip
	got.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	_, err = pods.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	return true, err
}
