package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/agent"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

const (
	nodeName = "node-1"
	ns       = "ns1"
)

// poll waits for cond to return nil; the assertion is its last error.
func poll(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	testkit.Poll(t, what, 30*time.Second, func(ctx context.Context) (bool, error) {
		err := cond(ctx)
		return err == nil, err
	})
}

type env struct {
	t        *testing.T
	srv      *controlplanetest.TestServer
	dp       versioned.Interface
	stateDir string
	hostConf string
	podCIDR  string       // default 10.244.0.0/24
	logger   *slog.Logger // default: none
	stop     func()
}

func (e *env) start() {
	e.t.Helper()
	hosts := filepath.Join(e.stateDir, "..", "node-hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1 localhost node-1\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	cidr := e.podCIDR
	if cidr == "" {
		cidr = "10.244.0.0/24"
	}
	a, err := agent.New(agent.Config{
		Client: e.srv.ClientConfig, NodeName: nodeName, ClusterDNS: []string{"10.240.0.10"},
		ClusterDomain: "cluster.local", ResolvConf: e.hostConf, PodCIDR: cidr,
		StateDir: e.stateDir, NodeIP: "127.0.0.1", DaemonPort: 10250, HostsFile: hosts,
		LeaseDurationSeconds: 4, LeaseRenewInterval: 200 * time.Millisecond, StatusInterval: time.Second,
		Logger: e.logger,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	e.stop = func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("agent Run: %v", err)
		}
	}
	select {
	case <-a.Synced():
	case err := <-done:
		e.t.Fatalf("agent stopped: %v", err)
	case <-time.After(60 * time.Second):
		e.t.Fatal("agent not synced within 60s")
	}
}

// newEnv is an API server with namespace ns and a state dir for one agent,
// without a host resolv.conf.
func newEnv(t *testing.T) *env {
	t.Helper()
	srv := controlplanetest.StartTestServer(t, controlplane.Config{})
	cfg := *srv.ClientConfig
	cfg.QPS, cfg.Burst = 100, 200
	if _, err := srv.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, dp: versioned.NewForConfigOrDie(&cfg), stateDir: filepath.Join(t.TempDir(), "state")}
}

// waitRunning waits for p to be Running with an IP and its resolv.conf.
func (e *env) waitRunning(p *dpcorev1.Pod) {
	e.t.Helper()
	poll(e.t, p.Name+" running", func(ctx context.Context) error {
		got, err := e.dp.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Status.Phase != corev1.PodRunning || got.Status.PodIP == "" {
			return fmt.Errorf("status %+v", got.Status)
		}
		conf, err := e.file(got, podfiles.ResolvConf)
		if err != nil {
			return err
		}
		if !strings.Contains(conf, "nameserver 10.240.0.10\n") {
			return fmt.Errorf("resolv.conf %q", conf)
		}
		return nil
	})
}

func pod(name string, spec dpcorev1.PodSpec) *dpcorev1.Pod {
	spec.NodeName = nodeName
	spec.Containers = []corev1.Container{{Name: "app", Image: "example"}}
	return &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec}
}

func (e *env) file(p *dpcorev1.Pod, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(podfiles.Dir(e.stateDir, p.Namespace, p.Name, p.UID), name))
	return string(b), err
}

func (e *env) events(ctx context.Context, podName, reason string) ([]corev1.Event, error) {
	list, err := e.srv.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == podName && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out, nil
}

func TestAgent(t *testing.T) {
	srv := controlplanetest.StartTestServer(t, controlplane.Config{})
	dir := t.TempDir()
	hostConf := filepath.Join(dir, "resolv.conf")
	// The host file of the seed's Custom example (examples/host-resolv.conf).
	if err := os.WriteFile(hostConf, []byte("nameserver 1.2.3.4\nsearch foo.com bar.com\noptions ndots:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := *srv.ClientConfig
	cfg.QPS, cfg.Burst = 100, 200 // the polls below, not the server, are the limit otherwise
	e := &env{t: t, srv: srv, dp: versioned.NewForConfigOrDie(&cfg), stateDir: filepath.Join(dir, "state"), hostConf: hostConf}
	ctx := context.Background()
	if _, err := srv.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.start()
	defer func() { e.stop() }()

	// Node Ready, lease held and renewed.
	poll(t, "node ready", func(ctx context.Context) error {
		n, err := srv.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Spec.PodCIDR != "10.244.0.0/24" || n.Status.Capacity.Pods().Value() != 253 || n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 || n.Status.NodeInfo.KubeletVersion != agent.KubeletVersion {
			return fmt.Errorf("node %+v %+v", n.Spec, n.Status)
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && c.Reason == "KubeletReady" {
				return nil
			}
		}
		return fmt.Errorf("not Ready: %+v", n.Status.Conditions)
	})
	var firstRenew time.Time
	poll(t, "lease", func(ctx context.Context) error {
		l, err := srv.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if *l.Spec.HolderIdentity != nodeName || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" || l.Spec.RenewTime == nil {
			return fmt.Errorf("lease %+v", l)
		}
		firstRenew = l.Spec.RenewTime.Time
		return nil
	})
	poll(t, "lease renewed", func(ctx context.Context) error {
		l, err := srv.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !l.Spec.RenewTime.After(firstRenew) {
			return fmt.Errorf("renewTime still %s", l.Spec.RenewTime)
		}
		return nil
	})

	searches30 := make([]string, 30)
	for i := range searches30 {
		searches30[i] = fmt.Sprintf("s%d.example", i)
	}
	cases := []struct {
		pod    *dpcorev1.Pod
		resolv string
	}{
		{pod("cluster-first", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{Hostname: "h", Subdomain: "sub"}}),
			"search ns1.svc.cluster.local svc.cluster.local cluster.local foo.com bar.com\nnameserver 10.240.0.10\noptions ndots:5\n"},
		{pod("host-net", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirstWithHostNet, HostNetwork: true}}),
			"search ns1.svc.cluster.local svc.cluster.local cluster.local foo.com bar.com\nnameserver 10.240.0.10\noptions ndots:5\n"},
		{pod("default", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSDefault}}),
			"search foo.com bar.com\nnameserver 1.2.3.4\noptions ndots:1\n"},
		{pod("none", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: corev1.DNSNone, DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}, Searches: []string{"a.example"}}}}),
			"search a.example\nnameserver 8.8.8.8\n"},
		// The seed's example (docs/pod-dns.md, "dnsPolicy: Custom"), byte for byte.
		{pod("custom", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: dpcorev1.DNSCustom}, DNSParams: &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{
			Search: []string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"}, Options: []string{"ndots:2"}}}}),
			"search ns1.svc.cluster.local my.dns.search.suffix foo.com bar.com\nnameserver 10.240.0.10\noptions ndots:2\n"},
		{pod("autopath", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSPolicy: dpcorev1.DNSClusterFirstWithAutopath}}),
			"search search.ns1.cluster.local.ap.k8s.io\nnameserver 10.240.0.10\noptions ndots:5\n"},
		// 3 cluster + 2 host + 30 = 35 paths: truncated to 32.
		{pod("many-searches", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSConfig: &corev1.PodDNSConfig{Searches: searches30}}}),
			"search ns1.svc.cluster.local svc.cluster.local cluster.local foo.com bar.com " + strings.Join(searches30[:27], " ") + "\nnameserver 10.240.0.10\noptions ndots:5\n"},
	}
	for i, c := range cases {
		p, err := e.dp.CoreV1().Pods(ns).Create(ctx, c.pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", c.pod.Name, err)
		}
		cases[i].pod = p
	}
	// A pod whose resolv.conf cannot be formed: an option name with a
	// space. The API server refuses it now, so it is stored as a pod
	// written before that rule (or by another API server) would be:
	// without validation (EnsureObject).
	badPod := pod("bad-option", dpcorev1.PodSpec{PodSpec: corev1.PodSpec{DNSConfig: &corev1.PodDNSConfig{
		Options: []corev1.PodDNSConfigOption{{Name: "a b"}}}}})
	badPod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	if err := e.srv.Server.EnsureObject(ctx, badPod); err != nil {
		t.Fatal(err)
	}
	bad, err := e.dp.CoreV1().Pods(ns).Get(ctx, badPod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ips := map[string]string{}
	for _, c := range cases {
		poll(t, "files of "+c.pod.Name, func(ctx context.Context) error {
			got, err := e.file(c.pod, podfiles.ResolvConf)
			if err != nil {
				return err
			}
			if got != c.resolv {
				return fmt.Errorf("resolv.conf\n%s\nwant\n%s", got, c.resolv)
			}
			p, err := e.dp.CoreV1().Pods(ns).Get(ctx, c.pod.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.Status.HostIP != "127.0.0.1" || len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready {
				return fmt.Errorf("status %+v", p.Status)
			}
			if p.Status.ContainerStatuses[0].ContainerID != agent.ContainerIDPrefix+"app" {
				return fmt.Errorf("containerID %q", p.Status.ContainerStatuses[0].ContainerID)
			}
			if c.pod.Spec.HostNetwork {
				if p.Status.PodIP != "127.0.0.1" {
					return fmt.Errorf("host-network pod IP %s", p.Status.PodIP)
				}
			} else {
				if !netip.MustParsePrefix("10.244.0.0/24").Contains(netip.MustParseAddr(p.Status.PodIP)) {
					return fmt.Errorf("pod IP %s outside the pod CIDR", p.Status.PodIP)
				}
				if other, dup := ips[p.Status.PodIP]; dup {
					t.Fatalf("pods %s and %s share IP %s", other, p.Name, p.Status.PodIP)
				}
				ips[p.Status.PodIP] = p.Name
			}
			return nil
		})
	}
	cf := cases[0].pod
	cfPod, _ := e.dp.CoreV1().Pods(ns).Get(ctx, cf.Name, metav1.GetOptions{})
	hosts, _ := e.file(cf, podfiles.Hosts)
	if want := cfPod.Status.PodIP + "\th.sub.ns1.svc.cluster.local\th\n"; !strings.HasPrefix(hosts, "# Kubernetes-managed hosts file.\n") || !strings.HasSuffix(hosts, want) {
		t.Errorf("hosts:\n%s\nwant the header and ending %q", hosts, want)
	}
	if hn, _ := e.file(cases[1].pod, podfiles.Hosts); hn != "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost node-1\n" {
		t.Errorf("host-network hosts %q", hn)
	}

	// DNSConfigForming visible through the Events API, once.
	forming := func(ctx context.Context) error {
		evs, err := e.events(ctx, "many-searches", "DNSConfigForming")
		if err != nil {
			return err
		}
		if len(evs) != 1 || evs[0].Count != 1 || evs[0].Type != corev1.EventTypeWarning || !strings.HasPrefix(evs[0].Message, "Search Line limits were exceeded") {
			return fmt.Errorf("events %+v", evs)
		}
		return nil
	}
	poll(t, "DNSConfigForming event", forming)

	// The bad pod: event, condition, no files, no IP.
	poll(t, "bad pod", func(ctx context.Context) error {
		p, err := e.dp.CoreV1().Pods(ns).Get(ctx, bad.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.PodIP != "" || p.Status.Phase != corev1.PodPending {
			return fmt.Errorf("status %+v", p.Status)
		}
		ok := false
		for _, c := range p.Status.Conditions {
			ok = ok || (c.Type == agent.ConditionDNSConfigured && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, `"a b"`))
		}
		if !ok {
			return fmt.Errorf("conditions %+v", p.Status.Conditions)
		}
		evs, err := e.events(ctx, bad.Name, agent.ReasonFailedCreatePodSandBox)
		if err != nil || len(evs) != 1 {
			return fmt.Errorf("events %+v %w", evs, err)
		}
		if _, err := os.Stat(podfiles.Dir(e.stateDir, ns, bad.Name, bad.UID)); !os.IsNotExist(err) {
			return fmt.Errorf("bad pod has a directory: %w", err)
		}
		return nil
	})

	// Delete: files gone, pod object gone, promptly (graceful delete finished by the agent).
	del := cases[3].pod
	if err := e.dp.CoreV1().Pods(ns).Delete(ctx, del.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "deleted pod gone", func(ctx context.Context) error {
		if _, err := e.dp.CoreV1().Pods(ns).Get(ctx, del.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod still there: %w", err)
		}
		if _, err := os.Stat(podfiles.Dir(e.stateDir, ns, del.Name, del.UID)); !os.IsNotExist(err) {
			return fmt.Errorf("files still there: %w", err)
		}
		return nil
	})

	for ip, name := range ips {
		if name == del.Name {
			delete(ips, ip) // released: the next pod may have it
		}
	}

	// Restart: stop the agent; meanwhile an orphan directory appears, a file
	// is damaged and the node's resolv.conf changes. The restarted agent
	// removes the orphan, rewrites what changed, keeps every IP and emits
	// no event again.
	rvBefore := map[string]string{}
	for _, c := range cases {
		if c.pod.Name == del.Name {
			continue
		}
		p, err := e.dp.CoreV1().Pods(ns).Get(ctx, c.pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvBefore[p.Name] = p.ResourceVersion + " " + p.Status.PodIP
	}
	e.stop()
	orphan := podfiles.Dir(e.stateDir, ns, "gone", "00000000-dead")
	if err := os.MkdirAll(orphan, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(podfiles.Dir(e.stateDir, ns, cf.Name, cf.UID), podfiles.ResolvConf), []byte("damaged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostConf, []byte("nameserver 5.6.7.8\nsearch foo.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.start()
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan directory not removed: %v", err)
	}
	if got, _ := e.file(cf, podfiles.ResolvConf); got != "search ns1.svc.cluster.local svc.cluster.local cluster.local foo.com\nnameserver 10.240.0.10\noptions ndots:5\n" {
		t.Errorf("damaged file not rewritten: %q", got)
	}
	if got, _ := e.file(cases[2].pod, podfiles.ResolvConf); got != "search foo.com\nnameserver 5.6.7.8\n" {
		t.Errorf("Default pod after the host change: %q", got)
	}
	for name, before := range rvBefore {
		p, err := e.dp.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Unchanged status: not written again (same resourceVersion), same IP.
		if got := p.ResourceVersion + " " + p.Status.PodIP; got != before {
			t.Errorf("pod %s: resourceVersion and IP %q after restart, was %q", name, got, before)
		}
	}
	// A new pod after the restart gets an IP nobody holds.
	np, err := e.dp.CoreV1().Pods(ns).Create(ctx, pod("after-restart", dpcorev1.PodSpec{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, "new pod IP", func(ctx context.Context) error {
		p, err := e.dp.CoreV1().Pods(ns).Get(ctx, np.Name, metav1.GetOptions{})
		if err != nil || p.Status.PodIP == "" {
			return fmt.Errorf("no IP yet: %w", err)
		}
		if other, dup := ips[p.Status.PodIP]; dup {
			t.Fatalf("new pod got %s, held by %s", p.Status.PodIP, other)
		}
		return nil
	})
	// The host's search line changed, so many-searches' applied line did:
	// one new DNSConfigForming event for the new message, and the old one
	// not repeated (each count 1).
	poll(t, "no repeated events", func(ctx context.Context) error {
		evs, err := e.events(ctx, "many-searches", "DNSConfigForming")
		if err != nil {
			return err
		}
		if len(evs) != 2 || evs[0].Count != 1 || evs[1].Count != 1 || evs[0].Message == evs[1].Message {
			return fmt.Errorf("want 2 events with distinct messages, count 1 each: %+v", evs)
		}
		return nil
	})
	if evs, err := e.events(ctx, bad.Name, agent.ReasonFailedCreatePodSandBox); err != nil || len(evs) != 1 || evs[0].Count != 1 {
		t.Errorf("sandbox events after restart: %+v %v", evs, err)
	}

	// A host file over kubelet's limits is a Warning on the Node, as
	// kubelet's CheckLimitsForResolvConf.
	e.stop()
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("d%d.example", i))
	}
	if err := os.WriteFile(hostConf, []byte("nameserver 5.6.7.8\nsearch "+strings.Join(many, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.start()
	poll(t, "the node's CheckLimitsForResolvConf event", func(ctx context.Context) error {
		list, err := e.srv.Client.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.InvolvedObject.Kind == "Node" && ev.InvolvedObject.Name == nodeName && ev.Reason == "CheckLimitsForResolvConf" &&
				ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, "search") {
				return nil
			}
		}
		return fmt.Errorf("no such event among %d", len(list.Items))
	})
}

// A node's pod capacity (status.capacity.pods, the usable addresses of
// --pod-cidr) reached: the next pod is rejected as kubelet's admission
// rejects it (phase Failed, reason OutOfpods, its message), with the
// Warning Event and a False DNSConfigured condition; a pod created once a
// place is free runs. It used to stay Pending with nothing saying why.
func TestAgentOutOfPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.podCIDR = "10.244.0.0/30" // network, gateway, broadcast: one pod address
	e.start()
	defer func() { e.stop() }()
	ctx := context.Background()
	poll(t, "node capacity", func(ctx context.Context) error {
		n, err := e.srv.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := n.Status.Capacity.Pods().Value(); got != 1 {
			return fmt.Errorf("capacity.pods %d", got)
		}
		return nil
	})
	first, err := e.dp.CoreV1().Pods(ns).Create(ctx, pod("first", dpcorev1.PodSpec{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.waitRunning(first)
	second, err := e.dp.CoreV1().Pods(ns).Create(ctx, pod("second", dpcorev1.PodSpec{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const msg = "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"
	poll(t, "second rejected", func(ctx context.Context) error {
		p, err := e.dp.CoreV1().Pods(ns).Get(ctx, second.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "OutOfpods" || p.Status.Message != "Pod was rejected: "+msg || p.Status.PodIP != "" {
			return fmt.Errorf("status %+v", p.Status)
		}
		cond := false
		for _, c := range p.Status.Conditions {
			cond = cond || (c.Type == agent.ConditionDNSConfigured && c.Status == corev1.ConditionFalse && c.Reason == "OutOfpods" && c.Message == msg)
		}
		if !cond {
			return fmt.Errorf("conditions %+v", p.Status.Conditions)
		}
		evs, err := e.events(ctx, second.Name, "OutOfpods")
		if err != nil {
			return err
		}
		if len(evs) != 1 || evs[0].Type != corev1.EventTypeWarning || evs[0].Message != msg {
			return fmt.Errorf("events %+v", evs)
		}
		if _, err := os.Stat(podfiles.Dir(e.stateDir, ns, second.Name, second.UID)); !os.IsNotExist(err) {
			return fmt.Errorf("rejected pod has a directory: %w", err)
		}
		return nil
	})
	if err := e.dp.CoreV1().Pods(ns).Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	third, err := e.dp.CoreV1().Pods(ns).Create(ctx, pod("third", dpcorev1.PodSpec{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.waitRunning(third)
	// kubelet leaves a rejected pod Failed; so does the agent.
	if p, err := e.dp.CoreV1().Pods(ns).Get(ctx, second.Name, metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodFailed {
		t.Errorf("rejected pod after a place freed: %v %v", p.Status.Phase, err)
	}
}

// The longest namespace (63 bytes) and pod name (253) with the UID are
// over NAME_MAX as <namespace>_<name>_<uid>: the pod used to stay Pending
// for good. It gets its files in a shortened directory, which `dnsplane
// exec` (podexec.FindPodDir) finds.
func TestAgentLongNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start()
	defer func() { e.stop() }()
	ctx := context.Background()
	longNS := strings.Repeat("n", 63)
	if _, err := e.srv.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: longNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l := strings.Repeat("p", 63)
	name := l + "." + l + "." + l + "." + strings.Repeat("p", 61) // 253 bytes
	p := pod(name, dpcorev1.PodSpec{})
	p.Namespace = longNS
	p, err := e.dp.CoreV1().Pods(longNS).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.waitRunning(p)
	dir, _, err := podexec.FindPodDir(ctx, e.srv.Client, podexec.StateDirFor(e.stateDir, ""), longNS, name)
	if err != nil {
		t.Fatal(err)
	}
	if base := filepath.Base(dir); len(base) > podfiles.NameMax || !strings.HasPrefix(base, longNS+"_") || !strings.HasSuffix(base, "_"+string(p.UID)) {
		t.Errorf("directory %q", base)
	}
	conf, err := os.ReadFile(filepath.Join(dir, podfiles.ResolvConf))
	if err != nil || !strings.Contains(string(conf), "search "+longNS+".svc.cluster.local") {
		t.Errorf("resolv.conf %q %v", conf, err)
	}
}
