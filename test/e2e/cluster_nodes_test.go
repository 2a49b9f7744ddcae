package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterNodes is a cluster of two nodes, `dnsplane up`'s and a second
// `dnsplane agent`: a DaemonSet gets a pod on each; then the second agent
// stops, and what kube's node lifecycle does follows (issue 20, item 3):
// its Node goes Ready=Unknown with the unreachable taints, its pods go not
// ready and leave their Service's answers (but not a
// publishNotReadyAddresses Service's), and they are not evicted at once —
// the API server gave them kube's 300 s tolerations. Once the Node is
// deleted, the pod garbage collector removes its pods.
func TestClusterNodes(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	// Longer than up's agent's 10 s lease renewal with room for a loaded
	// machine, so only the stopped node goes Unknown.
	const grace = 30 * time.Second
	u := startCluster(t, controllerConfig{nodeMonitorGracePeriod: grace}, "", "")
	kc := u.Kubeconfig
	cs := clientFor(t, kc)
	const node2 = "node-2"
	agent := secondAgent(t, kc, node2, "10.244.210.0/24", u.NodeCache, u.ClusterDNS)
	ns := newNamespace(t, kc)

	mustKubectl(t, kc, `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: everywhere
spec:
  selector:
    matchLabels:
      app: everywhere
  template:
    metadata:
      labels:
        app: everywhere
    spec:
      containers:
      - name: c
        image: nginx
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      nodeSelector:
        kubernetes.io/hostname: `+node2+`
      containers:
      - name: c
        image: nginx
---
apiVersion: v1
kind: Pod
metadata:
  name: impatient
  labels:
    app: impatient
spec:
  nodeSelector:
    kubernetes.io/hostname: `+node2+`
  tolerations:
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
  containers:
  - name: c
    image: nginx
---
apiVersion: v1
kind: Service
metadata:
  name: app
spec:
  clusterIP: None
  selector:
    app: app
  ports:
  - {name: http, port: 80}
---
apiVersion: v1
kind: Service
metadata:
  name: app-all
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector:
    app: app
  ports:
  - {name: http, port: 80}
`, "-n", ns, "apply", "-f", "-")

	rolloutStatus(t, kc, ns, "daemonset/everywhere")
	daemons := waitRunning(t, cs, ns, "app=everywhere", 2)
	var nodes []string
	for _, p := range daemons {
		nodes = append(nodes, p.Spec.NodeName)
	}
	slices.Sort(nodes)
	if want := []string{upNode, node2}; !slices.Equal(nodes, want) {
		t.Errorf("DaemonSet pods on nodes %v, want one on each of %v", nodes, want)
	}

	if impatient := waitRunning(t, cs, ns, "app=impatient", 1); impatient[0].Spec.NodeName != node2 {
		t.Fatalf("pod impatient on node %q, want %s", impatient[0].Spec.NodeName, node2)
	}
	pods := waitRunning(t, cs, ns, "app=app", 1)
	pod := pods[0]
	if pod.Spec.NodeName != node2 {
		t.Fatalf("pod %s on node %q, want %s (its nodeSelector)", pod.Name, pod.Spec.NodeName, node2)
	}
	ip := []string{pod.Status.PodIP}
	waitSlices(t, cs, ns, "app", ip)
	for _, svc := range []string{"app", "app-all"} {
		waitAnswers(t, u.NodeCache, svc+"."+ns+".svc.cluster.local", dns.TypeA, ip)
	}

	if err := agent.stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitUntil(t, grace+2*time.Minute, "node "+node2+" Ready=Unknown with the unreachable taints", func(ctx context.Context) (bool, string) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node2, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := nodeCondition(n, corev1.NodeReady)
		var taints []string
		for _, taint := range n.Spec.Taints {
			taints = append(taints, taint.Key+":"+string(taint.Effect))
		}
		slices.Sort(taints)
		want := []string{corev1.TaintNodeUnreachable + ":NoExecute", corev1.TaintNodeUnreachable + ":NoSchedule"}
		return c != nil && c.Status == corev1.ConditionUnknown && slices.Equal(taints, want),
			fmt.Sprintf("Ready %+v, taints %v", c, taints)
	})
	t.Logf("node %s Unknown and tainted %v after its agent stopped", node2, time.Since(stopped).Round(time.Second))

	// The node lifecycle controller marks its pods not ready; the
	// EndpointSlice controller keeps them as not ready, and the cluster DNS
	// answers only for the Service that publishes not-ready addresses.
	waitUntil(t, time.Minute, "pod "+pod.Name+" not ready and out of Service app", func(ctx context.Context) (bool, string) {
		ready, notReady, err := sliceAddresses(ctx, cs, ns, "app")
		if err != nil {
			return false, err.Error()
		}
		return len(ready) == 0 && slices.Equal(notReady, ip), fmt.Sprintf("ready %v, not ready %v", ready, notReady)
	})
	waitUntil(t, time.Minute, "Service app without answers", func(context.Context) (bool, string) {
		got, rcode, err := query(u.NodeCache, "app."+ns+".svc.cluster.local", dns.TypeA)
		return err == nil && len(got) == 0, fmt.Sprintf("%v (%s), %v", got, dns.RcodeToString[rcode], err)
	})
	waitAnswers(t, u.NodeCache, "app-all."+ns+".svc.cluster.local", dns.TypeA, ip)

	// The taint eviction controller evicts a pod that tolerates the taint
	// for 2 s; the agent that would finish its delete is gone, so it
	// stays, marked.
	waitUntil(t, time.Minute, "pod impatient evicted", func(ctx context.Context) (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "impatient", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := podCondition(p, corev1.DisruptionTarget)
		return p.DeletionTimestamp != nil && c != nil && c.Reason == "DeletionByTaintManager", fmt.Sprintf("deletionTimestamp %v, DisruptionTarget %+v", p.DeletionTimestamp, c)
	})

	// Not evicted at once: kube's DefaultTolerationSeconds gave the pod
	// 300 s for the NoExecute taint that is there now.
	got, err := cs.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod %s after the unreachable taint: %v", pod.Name, err)
	}
	if got.DeletionTimestamp != nil {
		t.Errorf("pod %s evicted at once: deletionTimestamp %v", pod.Name, got.DeletionTimestamp)
	}
	if c := podCondition(got, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("pod %s Ready %+v, want False", pod.Name, c)
	}
	tolerates := false
	for _, tol := range got.Spec.Tolerations {
		if tol.Key == corev1.TaintNodeUnreachable && tol.Effect == corev1.TaintEffectNoExecute && tol.TolerationSeconds != nil && *tol.TolerationSeconds == 300 {
			tolerates = true
		}
	}
	if !tolerates {
		t.Errorf("pod %s tolerations %+v, want kube's unreachable:NoExecute for 300 s", pod.Name, got.Spec.Tolerations)
	}

	// A Node that is deleted leaves pods bound to nothing: the pod
	// garbage collector deletes them (after its 40 s quarantine).
	wantKubectl(t, kc, "", ok(`node "`+node2+`" deleted`), "delete", "node", node2)
	waitUntil(t, 3*time.Minute, "pods of deleted node "+node2+" collected", func(ctx context.Context) (bool, string) {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node2})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, podSummary(list.Items)
	})
}
