package kube

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

const (
	// kubectlTimeout bounds one kubectl run.
	kubectlTimeout = time.Minute
	// fwdZone is the zone the DNS resource forwards to the test's server.
	fwdZone = "fwd.test"
	// fwdAnswer is what the test's server answers for every A query.
	fwdAnswer = "192.0.2.53"
	// installNamespace and webhookConfig are the chart's names (docs/kubernetes.md).
	installNamespace = "dnsplane-system"
	webhookConfig    = "dnsplane"
)

// kubectl runs the kubectl on PATH as the cluster's admin.
func (c *cluster) kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.admin, "HOME="+c.dir)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String() + errOut.String(), fmt.Errorf("kubectl %s: %w\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String() + errOut.String(), nil
}

// installation is what install started: the processes of the install's
// pods and the addresses pods resolve with.
type installation struct {
	webhooks    []*process
	operator    *process
	webhookArgs []string
	// vip is the cluster DNS Service's IP, which the first cluster DNS
	// pod's process binds (port 53), standing in for kube-proxy.
	vip       string
	dnsPods   []corev1.Pod
	nodeCache *process
	fwdAddr   string
	// how says what installed it.
	how string
}

// install installs dnsplane with docs/kubernetes.md's install commands
// (the rendered chart), runs the webhook and the operator
// from their Deployments, a forward zone's nameserver, the cluster DNS
// from the operator's DaemonSet and ConfigMap and the node cache from its
// DaemonSet, and returns once the cluster DNS answers through the node
// cache.
func (c *cluster) install(ctx context.Context, t testing.TB) *installation {
	t.Helper()
	in := &installation{vip: clusterDNSIP}
	// The docs' own commands, so a user who follows docs/kubernetes.md
	// gets what this test checks.
	blocks := docsBlocks(t, installMarker)
	if len(blocks) == 0 {
		t.Fatalf("%s has no ```sh block after %s", docsFile, installMarker)
	}
	in.how = "docs/kubernetes.md's install commands"
	c.runBlocks(ctx, t, blocks)
	if _, err := c.kubectl(ctx, "", "wait", "--for=condition=Established", "--timeout=60s", "crd/dnses.operator.dnsplane.io"); err != nil {
		t.Fatal(err)
	}

	// The webhook first: the DNS resource's writes go through it
	// (failurePolicy Fail), the operator's creation of DNS/default too.
	for i, pod := range c.deploymentPods(ctx, t, "webhook") {
		p := c.runPod(ctx, t, &pod, func(args []string, _ string) []string {
			args = setFlag(args, "listen", net.JoinHostPort(pod.Status.PodIP, "9443"))
			args = setFlag(args, "cert-dir", filepath.Join(c.dir, "pods", pod.Namespace+"_"+pod.Name, "certs"))
			args = setFlag(args, "host-search", strings.Join(hostSearch, ","))
			// The chart's --cluster-dns and --node-cache are the agents'
			// kubelet flags already (the node cache, then the cluster
			// DNS): checkResolvConf compares with those.
			if i == 0 {
				in.webhookArgs = args
			}
			return args
		})
		in.webhooks = append(in.webhooks, p)
	}
	c.waitWebhook(ctx, t, in.webhooks)

	in.fwdAddr = c.startForwardServer(t)
	spec := fmt.Sprintf(`apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  pluginConfig:
    forwardPlugins:
    - domain: %s
      nameServers: [%q]
`, fwdZone, in.fwdAddr)
	if _, err := c.kubectl(ctx, spec, "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatal(err)
	}

	op := c.deploymentPods(ctx, t, "operator")[0]
	in.operator = c.runPod(ctx, t, &op, nil)
	corefile := c.waitDNSAvailable(ctx, t, in.operator)

	ds, err := c.cs.AppsV1().DaemonSets(installNamespace).Get(ctx, "dns-default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	in.dnsPods = c.runningPods(ctx, t, installNamespace, sel.String(), len(c.nodes))
	for i := range in.dnsPods {
		p := &in.dnsPods[i]
		vip := ""
		if i == 0 {
			vip = in.vip
		}
		file := filepath.Join(c.dir, "pods", p.Namespace+"_"+p.Name, "Corefile")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(podCorefile(corefile, p.Status.PodIP, vip)), 0o644); err != nil {
			t.Fatal(err)
		}
		c.runPod(ctx, t, p, func(args []string, _ string) []string { return setFlag(args, "conf", file) })
	}
	in.nodeCache = c.startNodeCache(ctx, t)
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, startTimeout, true, func(ctx context.Context) (bool, error) {
		if !in.nodeCache.running() {
			return false, fmt.Errorf("the node cache exited: %w", in.nodeCache.err)
		}
		_, err := lookup(net.JoinHostPort(nodeCacheIP, "53"), "kubernetes.default.svc.cluster.local.")
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the node cache did not answer kubernetes.default.svc.cluster.local: %v", err)
	}
	return in
}

// startNodeCache runs the node cache: the install's DaemonSet pod on the
// first node (the nodes share the test's network namespace, one host
// network, so one cache serves them all), or, with no such DaemonSet,
// `nodecache` itself on 169.254.20.10. It logs every query, for the
// test to see what went through it.
func (c *cluster) startNodeCache(ctx context.Context, t testing.TB) *process {
	t.Helper()
	ds, err := c.cs.AppsV1().DaemonSets(installNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// --setup-interface needs the kernel's dummy interface driver, which
	// not every test machine has (internal/nodecachenet's tests cover the
	// interface and rules there with another link type).
	interfaceFlags := dummySupported()
	for _, d := range ds.Items {
		if args := d.Spec.Template.Spec.Containers[0].Args; len(args) == 0 || args[0] != "nodecache" {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range c.runningPods(ctx, t, installNamespace, sel.String(), len(c.nodes)) {
			if p.Spec.NodeName != c.nodes[0].name {
				continue
			}
			return c.runPod(ctx, t, &p, func(args []string, _ string) []string {
				if !interfaceFlags {
					// The address goes on lo, as the flag would put it
					// on its dummy interface.
					t.Logf("this kernel has no dummy interface driver: running the DaemonSet's command without --setup-interface, %s on lo", nodeCacheIP)
					args = dropFlags(args, "setup-interface", "interface-name", "local-ip", "skip-teardown")
					addLocalAddress(t, nodeCacheIP)
				}
				return setFlag(args, "log-queries", "true")
			})
		}
	}
	t.Logf("the install has no node cache DaemonSet: running dnsplane-dns nodecache on %s", nodeCacheIP)
	addLocalAddress(t, nodeCacheIP)
	return startProcess(t, "nodecache", nil, dnsBin, "nodecache",
		"--listen", net.JoinHostPort(nodeCacheIP, "53"), "--cluster-dns", net.JoinHostPort(clusterDNSIP, "53"),
		"--upstream-resolv-conf", c.hostResolvConf, "--log-queries")
}

// addLocalAddress puts ip on lo, in the test's network namespace.
func addLocalAddress(t testing.TB, ip string) {
	t.Helper()
	if out, err := exec.Command("ip", "addr", "add", ip+"/32", "dev", "lo").CombinedOutput(); err != nil && !strings.Contains(string(out), "exists") {
		t.Fatalf("ip addr add %s/32 dev lo: %v\n%s", ip, err, out)
	}
}

// deploymentPods is the running pods of the install's Deployment whose
// container runs the dnsplane command cmd.
func (c *cluster) deploymentPods(ctx context.Context, t testing.TB, cmd string) []corev1.Pod {
	t.Helper()
	l, err := c.cs.AppsV1().Deployments(installNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range l.Items {
		if args := d.Spec.Template.Spec.Containers[0].Args; len(args) > 0 && args[0] == cmd {
			sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			return c.runningPods(ctx, t, installNamespace, sel.String(), deploymentReplicas(&d))
		}
	}
	t.Fatalf("the install has no Deployment running `%s`", cmd)
	return nil
}

func deploymentReplicas(d *appsv1.Deployment) int {
	if d.Spec.Replicas == nil {
		return 1
	}
	return int(*d.Spec.Replicas)
}

// waitWebhook waits until kube-apiserver reaches the webhook: a dry-run
// create of a Custom pod is admitted.
func (c *cluster) waitWebhook(ctx context.Context, t testing.TB, ps []*process) {
	t.Helper()
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range ps {
			if !p.running() {
				return false, fmt.Errorf("%s exited: %w", p.name, p.err)
			}
		}
		_, last = c.cs.CoreV1().Pods("default").Create(ctx, customPod("webhook-probe", `{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)"]}}`),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last == nil, nil
	}); err != nil {
		t.Fatalf("kube-apiserver does not reach the webhook: %v (last: %v)", err, last)
	}
}

// waitDNSAvailable waits for DNS/default Available with the forward zone
// in its ConfigMap and returns the Corefile.
func (c *cluster) waitDNSAvailable(ctx context.Context, t testing.TB, op *process) string {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := operatorv1.SchemeGroupVersion.WithResource("dnses")
	var corefile, state string
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if !op.running() {
			return false, fmt.Errorf("the operator exited: %w", op.err)
		}
		u, err := dyn.Resource(gvr).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			state = err.Error()
			return false, nil
		}
		conds, _, _ := unstructuredConditions(u.Object)
		state = fmt.Sprint(conds)
		if conds[operatorv1.DNSAvailable] != "True" {
			return false, nil
		}
		cm, err := c.cs.CoreV1().ConfigMaps(installNamespace).Get(ctx, "dns-default", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		corefile = cm.Data["Corefile"]
		return strings.Contains(corefile, fwdZone+":5353"), nil
	}); err != nil {
		t.Fatalf("DNS/default not Available with %s: %v (conditions %s)\nCorefile:\n%s", fwdZone, err, state, corefile)
	}
	return corefile
}

// unstructuredConditions maps status.conditions' types to their status.
func unstructuredConditions(obj map[string]any) (map[string]string, bool, error) {
	out := map[string]string{}
	status, _ := obj["status"].(map[string]any)
	list, _ := status["conditions"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		st, _ := m["status"].(string)
		out[typ] = st
	}
	return out, len(list) > 0, nil
}

// startForwardServer serves fwdZone on a loopback address of the run,
// answering fwdAnswer to every A query, and returns its ADDR:PORT.
func (c *cluster) startForwardServer(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if q := r.Question[0]; q.Qtype == dns.TypeA && dns.IsSubDomain(fwdZone+".", q.Name) {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30},
				A: net.ParseIP(fwdAnswer)})
		}
		_ = w.WriteMsg(m)
	})
	udp, tcp := &dns.Server{PacketConn: pc, Handler: h}, &dns.Server{Listener: ln, Handler: h}
	go func() { _ = udp.ActivateAndServe() }()
	go func() { _ = tcp.ActivateAndServe() }()
	t.Cleanup(func() {
		_ = udp.Shutdown()
		_ = tcp.Shutdown()
	})
	return addr
}

// lookup asks server for name's A records.
func lookup(server, name string) ([]string, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	cl := &dns.Client{Timeout: 2 * time.Second}
	r, _, err := cl.Exchange(m, server)
	if err != nil {
		return nil, err
	}
	if r.Rcode != dns.RcodeSuccess {
		return nil, fmt.Errorf("%s: %s", name, dns.RcodeToString[r.Rcode])
	}
	var ips []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ips = append(ips, a.A.String())
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s: no A record", name)
	}
	return ips, nil
}

// dummySupported reports whether a dummy interface can be made in the
// test's network namespace (the kernel's CONFIG_DUMMY).
func dummySupported() bool {
	const probe = "dnsplane-probe"
	if err := exec.Command("ip", "link", "add", probe, "type", "dummy").Run(); err != nil {
		return false
	}
	_ = exec.Command("ip", "link", "delete", probe).Run()
	return true
}
