package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// The cluster tests (cluster_test.go, cluster_nodes_test.go) need what
// kube-controller-manager and kube-scheduler do: Deployments,
// StatefulSets, DaemonSets and Jobs get pods, pods get nodes, Services get
// EndpointSlices, nodes that stop renewing their Lease get tainted (issue
// 20). `dnsplane up` runs upstream's controllers and scheduler in its
// process (docs/controllers.md).

// controllerConfig is what a cluster test needs of up's controllers.
type controllerConfig struct {
	// nodeMonitorGracePeriod is how long the node lifecycle controller
	// waits for a node's Lease or status before it sets Ready=Unknown
	// (kube's default is 50 s); zero keeps the default.
	nodeMonitorGracePeriod time.Duration
}

// upControllerFlags are the flags of `dnsplane up` that configure its
// controllers as cfg says.
func upControllerFlags(cfg controllerConfig) []string {
	if cfg.nodeMonitorGracePeriod == 0 {
		return nil
	}
	return []string{"--node-monitor-grace-period", cfg.nodeMonitorGracePeriod.String()}
}

// waitUntil polls cond until it holds; after timeout the test fails with
// what and cond's last message.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	testkit.PollEvery(t, what, 250*time.Millisecond, timeout, explained(cond))
}

// explained is cond, which says why it does not hold yet in a message, as
// a testkit condition.
func explained(cond func(ctx context.Context) (bool, string)) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		if ok, msg := cond(ctx); !ok {
			return false, errors.New(msg)
		}
		return true, nil
	}
}

// rolloutStatus runs kubectl rollout status for obj (kind/name) in ns;
// when it does not complete, the test fails with the object's status and
// the namespace's events, which say what blocked it.
func rolloutStatus(t *testing.T, kubeconfig, ns, obj string) {
	t.Helper()
	// Within kubectlTimeout, so kubectl reports rather than is killed.
	out, errOut, code := kubectl(t, kubeconfig, "", "-n", ns, "rollout", "status", obj, "--timeout=50s")
	if code == 0 {
		return
	}
	status, _, _ := kubectl(t, kubeconfig, "", "-n", ns, "get", obj, "-o", "jsonpath={.status}")
	events, _, _ := kubectl(t, kubeconfig, "", "-n", ns, "get", "events")
	t.Fatalf("kubectl rollout status %s: exit %d\n%s%s\nstatus: %s\nevents:\n%s", obj, code, out, errOut, status, events)
}

// livePods are the pods of ns matching selector that are not being
// deleted.
func livePods(ctx context.Context, cs kubernetes.Interface, ns, selector string) ([]corev1.Pod, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// podSummary is "name@node phase ip" per pod, for failure messages.
func podSummary(pods []corev1.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, fmt.Sprintf("%s@%s %s %s", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// waitRunning waits until exactly n live pods match selector, each bound
// to a node and Running with an IP, and returns them.
func waitRunning(t *testing.T, cs kubernetes.Interface, ns, selector string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	waitUntil(t, 2*time.Minute, fmt.Sprintf("%d Running pods %s in %s", n, selector, ns), func(ctx context.Context) (bool, string) {
		var err error
		if pods, err = livePods(ctx, cs, ns, selector); err != nil {
			return false, err.Error()
		}
		if len(pods) != n {
			return false, podSummary(pods)
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
				return false, podSummary(pods)
			}
		}
		return true, ""
	})
	return pods
}

// podIPs are the pods' IPs, sorted.
func podIPs(pods []corev1.Pod) []string {
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	slices.Sort(ips)
	return ips
}

// sliceAddresses are the addresses in the EndpointSlices of Service svc
// whose endpoints are ready, and of those that are not, each sorted.
func sliceAddresses(ctx context.Context, cs kubernetes.Interface, ns, svc string) (ready, notReady []string, err error) {
	list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready = append(ready, e.Addresses...)
			} else {
				notReady = append(notReady, e.Addresses...)
			}
		}
	}
	slices.Sort(ready)
	slices.Sort(notReady)
	return ready, notReady, nil
}

// waitSlices waits until Service svc's EndpointSlices list exactly the
// ready addresses want (and no others).
func waitSlices(t *testing.T, cs kubernetes.Interface, ns, svc string, want []string) {
	t.Helper()
	waitUntil(t, time.Minute, "EndpointSlices of "+ns+"/"+svc, func(ctx context.Context) (bool, string) {
		ready, notReady, err := sliceAddresses(ctx, cs, ns, svc)
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(ready, want) && len(notReady) == 0, fmt.Sprintf("ready %v, not ready %v; want ready %v", ready, notReady, want)
	})
}

// query asks server for name (qtype A or SRV) and returns the answers
// ("ip" for A, "target port" for SRV), sorted, and the response code.
func query(server, name string, qtype uint16) ([]string, int, error) {
	c := &dns.Client{Timeout: 2 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := c.Exchange(m, server)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s @%s: %w", dns.TypeToString[qtype], name, server, err)
	}
	var got []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			got = append(got, rr.A.String())
		case *dns.SRV:
			got = append(got, rr.Target+" "+strconv.Itoa(int(rr.Port)))
		}
	}
	slices.Sort(got)
	return got, r.Rcode, nil
}

// waitAnswers waits until server answers name (qtype) with exactly want;
// caches in front of the cluster DNS keep an answer for its TTL.
func waitAnswers(t *testing.T, server, name string, qtype uint16, want []string) {
	t.Helper()
	waitUntil(t, time.Minute, dns.TypeToString[qtype]+" "+name+" @"+server, func(context.Context) (bool, string) {
		got, rcode, err := query(server, name, qtype)
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(got, want), fmt.Sprintf("%v (%s), want %v", got, dns.RcodeToString[rcode], want)
	})
}

// waitResolves waits until resolver ("glibc" or "musl") in pod finds
// exactly want for name.
func (c *agentCluster) waitResolves(t *testing.T, resolver, musl, pod, name string, want []string) {
	t.Helper()
	waitUntil(t, time.Minute, resolver+" in "+pod+": "+name, func(context.Context) (bool, string) {
		got := c.resolve(t, resolver, musl, pod, name)
		return slices.Equal(got.addrs, want), fmt.Sprintf("%v, want %v", got.addrs, want)
	})
}

// secondAgent starts `dnsplane agent` for node name as a second node of
// the cluster at kubeconfig and waits for its Node to be Ready; stop it
// with its process's stop (cleanup kills it).
func secondAgent(t *testing.T, kubeconfig, name, podCIDR string, clusterDNS ...string) *process {
	t.Helper()
	var servers []string
	for _, s := range clusterDNS {
		servers = append(servers, hostOf(s))
	}
	p, err := startProcess("dnsplane agent "+name, dnsplaneBin, "agent", "--kubeconfig", kubeconfig,
		"--node-name", name, "--cluster-dns", strings.Join(servers, ","), "--cluster-domain", "cluster.local",
		"--resolv-conf", "", "--pod-cidr", podCIDR, "--state-dir", t.TempDir(), "--node-ip", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("log of %s:\n%s", p.name, p.stderr.tail())
		}
	})
	cs := clientFor(t, kubeconfig)
	waitUntil(t, time.Minute, "node "+name+" Ready", func(ctx context.Context) (bool, string) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := nodeCondition(n, corev1.NodeReady)
		return c != nil && c.Status == corev1.ConditionTrue, fmt.Sprintf("%+v", c)
	})
	return p
}

// nodeCondition is n's condition of type typ, or nil.
func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// podCondition is p's condition of type typ, or nil.
func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// startCluster is `dnsplane up` with its DNS on the given addresses
// (loopback53's, for pods' resolvers) or free ports (""), its controllers
// configured as cfg says.
func startCluster(t *testing.T, cfg controllerConfig, dnsAddr, nodeAddr string, extra ...string) *upServer {
	t.Helper()
	args := append(upControllerFlags(cfg), extra...)
	if dnsAddr != "" {
		args = append(args, "--dns-listen", dnsAddr, "--nodecache-listen", nodeAddr)
	}
	return startUp(t, filepath.Join(t.TempDir(), "data"), nil, args...)
}
