package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/dnsparams"
	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/webhook/poddns"
)

// The policies users write on a stock cluster (docs/kubernetes.md).
const (
	customParams  = `{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","my.dns.search.suffix","$(HOST)"],"options":["ndots:2","edns0"]}}`
	customParams2 = `{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","$(HOST)"],"options":["ndots:3"]}}`
)

// podSpecYAML is a pod's spec in a manifest, indented for a pod (indent 2)
// or a template (indent 6).
func specYAML(policy, params string, indent int) (meta, spec string) {
	pad := strings.Repeat(" ", indent)
	if params != "" {
		meta = fmt.Sprintf("%sannotations:\n%s  %s: '%s'\n", pad, pad, dnsparams.Annotation, params)
	}
	spec = fmt.Sprintf("%sdnsPolicy: %s\n%scontainers:\n%s- name: c\n%s  image: example\n", pad, policy, pad, pad, pad)
	return meta, spec
}

func podYAML(ns, name, policy, params string) string {
	meta, spec := specYAML(policy, params, 2)
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n%sspec:\n%s", name, ns, meta, spec)
}

func deploymentYAML(ns, name, policy, params string) string {
	meta, spec := specYAML(policy, params, 6)
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
%[3]s    spec:
%[4]s`, name, ns, meta, spec)
}

// TestKubernetes is issue 30's end-to-end test: dnsplane installed on the
// real kube-apiserver with real kubectl (docs/kubernetes.md).
func TestKubernetes(t *testing.T) {
	requireTools(t)
	c := startCluster(t, 2)
	ctx := context.Background()
	start := time.Now()
	in := c.install(ctx, t)
	t.Logf("installed with %s in %v: webhook %v", in.how, time.Since(start).Round(time.Millisecond), in.webhookArgs)

	const ns = "apps"
	if _, err := c.kubectl(ctx, "", "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	c.waitServiceAccount(ctx, t, ns)

	t.Run("OperatorReconciles", func(t *testing.T) {
		for _, kind := range []string{"configmap", "service", "daemonset"} {
			out, err := c.kubectl(ctx, "", "get", "-n", installNamespace, kind, "dns-default",
				"-o", `jsonpath={.metadata.labels.dns\.operator\.dnsplane\.io/owning-dns}`)
			if err != nil {
				t.Error(err)
			} else if out != "default" {
				t.Errorf("%s dns-default: label %s=%q, want the operator's (default)", kind, operator.OwnerLabel, out)
			}
		}
		out, err := c.kubectl(ctx, "", "get", "dns", "default")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kubectl get dns default:\n%s", out)
	})

	// The stock cluster's pods, by name, for the later subtests.
	pods := map[string]*corev1.Pod{}
	cases := []struct{ name, policy, params string }{
		{"custom", "Custom", customParams},
		{"autopath", "ClusterFirstWithAutopath", ""},
	}
	t.Run("PoliciesRewritten", func(t *testing.T) {
		for _, tc := range cases {
			orig := podYAML(ns, tc.name, tc.policy, tc.params)
			if _, err := c.kubectl(ctx, orig, "apply", "-f", "-"); err != nil {
				t.Fatalf("%s pod: %v", tc.policy, err)
			}
			p := c.runningPod(ctx, t, ns, tc.name)
			pods[tc.name] = p
			c.checkRewritten(t, p.Spec, p.ObjectMeta, tc.policy)
			c.checkResolvConf(t, p, orig)

			dep := tc.name + "-deploy"
			origDep := deploymentYAML(ns, dep, tc.policy, tc.params)
			if _, err := c.kubectl(ctx, origDep, "apply", "-f", "-"); err != nil {
				t.Fatalf("%s Deployment: %v", tc.policy, err)
			}
			d, err := c.cs.AppsV1().Deployments(ns).Get(ctx, dep, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c.checkRewritten(t, d.Spec.Template.Spec, d.Spec.Template.ObjectMeta, tc.policy)
			dp := c.rolledOutPods(ctx, t, d)
			c.checkRewritten(t, dp[0].Spec, dp[0].ObjectMeta, tc.policy)
			// The pod as dnsplane's server would hold it: the template's
			// original spec under the pod's name.
			c.checkResolvConf(t, &dp[0], podYAML(ns, dp[0].Name, tc.policy, tc.params))
		}
	})

	t.Run("ParamsChangeRollsOut", func(t *testing.T) {
		const dep = "custom-deploy"
		before := c.replicaSets(ctx, t, ns, dep)
		if _, err := c.kubectl(ctx, deploymentYAML(ns, dep, "Custom", customParams2), "apply", "-f", "-"); err != nil {
			t.Fatal(err)
		}
		d, err := c.cs.AppsV1().Deployments(ns).Get(ctx, dep, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, pollInterval, startTimeout, true, func(ctx context.Context) (bool, error) {
			return len(c.replicaSets(ctx, t, ns, dep)) == len(before)+1, nil
		}); err != nil {
			t.Fatalf("a change of only the params annotation rolled out no new ReplicaSet (had %d): %v", len(before), err)
		}
		dp := c.rolledOutPods(ctx, t, d)
		c.checkResolvConf(t, &dp[0], podYAML(ns, dp[0].Name, "Custom", customParams2))
	})

	t.Run("ExecResolvesThroughNodeCache", func(t *testing.T) {
		for _, y := range []string{
			"apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: " + ns + "}\nspec:\n  ports: [{port: 80}]\n",
			"apiVersion: v1\nkind: Service\nmetadata: {name: hl, namespace: " + ns + "}\nspec:\n  clusterIP: None\n  selector: {app: h1}\n  ports: [{port: 80}]\n",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: h1, namespace: " + ns + ", labels: {app: h1}}\nspec:\n  hostname: h1\n  subdomain: hl\n  containers: [{name: c, image: example}]\n",
		} {
			if _, err := c.kubectl(ctx, y, "apply", "-f", "-"); err != nil {
				t.Fatal(err)
			}
		}
		svc, err := c.cs.CoreV1().Services(ns).Get(ctx, "svc1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h1 := c.runningPod(ctx, t, ns, "h1")
		want := map[string]string{"svc1": svc.Spec.ClusterIP, "h1.hl": h1.Status.PodIP, "www." + fwdZone: fwdAnswer}
		for _, name := range []string{"custom", "autopath"} {
			p := pods[name]
			if p == nil {
				t.Fatalf("no %s pod (PoliciesRewritten failed)", name)
			}
			for host, ip := range want {
				var out string
				var execErr error
				// The headless name appears once the endpoints
				// controller and the cluster DNS have seen the pod.
				if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
					out, execErr = c.exec(ctx, p, "getent", "hosts", host)
					return execErr == nil && strings.HasPrefix(out, ip+" "), nil
				}); err != nil {
					t.Errorf("pod %s: getent hosts %s = %q (%v), want %s", name, host, out, execErr, ip)
				}
			}
		}
		// Through the node cache (the pods' first nameserver), which logs
		// every query; the autopath pod's names in their ap.k8s.io form.
		log := in.nodeCache.out.String()
		for _, q := range []string{"svc1." + ns + ".svc.cluster.local.", "svc1.search." + ns + ".cluster.local.ap.k8s.io.",
			"h1.hl." + ns + ".svc.cluster.local.", "h1.hl.search." + ns + ".cluster.local.ap.k8s.io.", "www." + fwdZone + "."} {
			if !strings.Contains(log, `"A IN `+q+` `) {
				t.Errorf("the node cache was not asked for %s", q)
			}
		}
	})

	t.Run("InvalidDNSRefused", func(t *testing.T) {
		// Each alone: kube-apiserver stops at the CRD's schema and CEL
		// rules, so the webhook sees only what passed them.
		for _, fp := range []string{
			`{domain: foo.com, nameServers: ["not-an-ip:99999"]}`,
			`{domain: foo.com, nameServers: ["192.0.2.1"]}, {domain: foo.com, nameServers: ["192.0.2.2"]}`,
			`{domain: cluster.local, nameServers: ["192.0.2.1"]}`,
			`{domain: foo.com, nameServers: ["192.0.2.1", "192.0.2.1"]}`,
		} {
			c.checkRefused(ctx, t, "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata:\n  name: default\nspec:\n  pluginConfig:\n    forwardPlugins: ["+fp+"]\n")
		}
	})

	t.Run("InvalidParamsRefused", func(t *testing.T) {
		c.checkRefused(ctx, t, podYAML(ns, "bad", "Custom", `{"custom":{"search":["$(HOST)","$(NAMESPACE).svc"],"options":["ndots:16"]}}`))
		c.checkRefused(ctx, t, deploymentYAML(ns, "bad", "Custom", `{"custom":{"search":["a..b"]}}`))
	})

	t.Run("AdmissionLatency", func(t *testing.T) {
		with, without := c.admissionLatency(ctx, t, ns, 50)
		t.Logf("pod create (dry run), mean of 50: %v through the webhook (Custom), %v without (the same pod as dnsPolicy None + dnsConfig): %+.2f ms per pod",
			with, without, float64(with-without)/float64(time.Millisecond))
	})

	t.Run("WebhookDown", func(t *testing.T) {
		for _, p := range in.webhooks {
			if err := p.stop(); err != nil {
				t.Fatal(err)
			}
		}
		_, err := c.cs.CoreV1().Pods(ns).Create(ctx, customPod("down-custom", customParams), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `failed calling webhook "`+"pods.dns.dnsplane.io"+`"`) {
			t.Errorf("a Custom pod with the webhook down: %v, want a refusal naming the webhook", err)
		}
		plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "down-plain"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example"}}}}
		if _, err := c.cs.CoreV1().Pods(ns).Create(ctx, plain, metav1.CreateOptions{}); err != nil {
			t.Errorf("an ordinary pod with the webhook down: %v", err)
		}
		// A workload's rewritten template carries the policy annotation,
		// and so do the pods its controller creates from it: while the
		// webhook is down, its controller can neither update its
		// ReplicaSet (a scale, a rollout) nor create its pods.
		rss := c.replicaSets(ctx, t, ns, "custom-deploy")
		if len(rss) == 0 {
			t.Fatal("no ReplicaSet of custom-deploy (PoliciesRewritten failed)")
		}
		rs := rss[0].DeepCopy()
		rs.Labels["touched"] = "while-down"
		if _, err := c.cs.AppsV1().ReplicaSets(ns).Update(ctx, rs, metav1.UpdateOptions{}); err == nil ||
			!strings.Contains(err.Error(), `failed calling webhook "workloads.dns.dnsplane.io"`) {
			t.Errorf("updating a Custom Deployment's ReplicaSet with the webhook down: %v, want a refusal naming the webhook", err)
		}
		pod := &corev1.Pod{ObjectMeta: *rs.Spec.Template.ObjectMeta.DeepCopy(), Spec: *rs.Spec.Template.Spec.DeepCopy()}
		pod.Name = "down-from-template"
		if _, err := c.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err == nil ||
			!strings.Contains(err.Error(), `failed calling webhook "pods.dns.dnsplane.io"`) {
			t.Errorf("a pod from a Custom Deployment's template with the webhook down: %v, want a refusal naming the webhook", err)
		}
	})

	t.Run("DocsUninstall", func(t *testing.T) {
		blocks := docsBlocks(t, uninstallMarker)
		if len(blocks) == 0 {
			t.Fatalf("%s has no ```sh block after %s", docsFile, uninstallMarker)
		}
		c.runBlocks(ctx, t, blocks)
		c.checkNothingLeft(ctx, t)
	})
}

func (c *cluster) waitServiceAccount(ctx context.Context, t testing.TB, ns string) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, startTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("namespace %s has no default ServiceAccount: %v", ns, err)
	}
}

// runningPod waits for the pod to run with its files written.
func (c *cluster) runningPod(ctx context.Context, t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, startTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		p, err = c.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "", nil
	}); err != nil {
		t.Fatalf("pod %s/%s not running: %v", ns, name, err)
	}
	return p
}

// checkRewritten checks a pod spec that asked for policy holds what a
// stock kubelet understands: dnsPolicy None, a dnsConfig, and the request
// recorded in the policy annotation.
func (c *cluster) checkRewritten(t *testing.T, spec corev1.PodSpec, meta metav1.ObjectMeta, policy string) {
	t.Helper()
	if spec.DNSPolicy != corev1.DNSNone || spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0 {
		t.Errorf("%s %s: dnsPolicy %q, dnsConfig %+v; want None and a dnsConfig", policy, meta.Name, spec.DNSPolicy, spec.DNSConfig)
	}
	if got := meta.Annotations[poddns.PolicyAnnotation]; got != policy {
		t.Errorf("%s %s: annotation %s = %q, want %q", policy, meta.Name, poddns.PolicyAnnotation, got, policy)
	}
}

// checkResolvConf compares the resolv.conf the agent wrote for the stock
// cluster's (rewritten) pod with what dnsplane's agent, with the test's
// agents' flags, writes for orig on dnsplane's own API server
// (`dnsplane resolvconf`, the agent's code).
func (c *cluster) checkResolvConf(t *testing.T, p *corev1.Pod, orig string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(podfiles.Dir(c.node(t, p.Spec.NodeName).stateDir, p.Namespace, p.Name, p.UID), "resolv.conf"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command(dnsplaneBin, "resolvconf", "-f", file, "--cluster-dns", agentClusterDNS,
		"--host-resolv-conf", c.hostResolvConf).CombinedOutput()
	if err != nil {
		t.Fatalf("dnsplane resolvconf: %v\n%s", err, want)
	}
	if string(got) != string(want) {
		t.Errorf("pod %s/%s: the agent wrote\n%s\ndnsplane's server would give\n%s", p.Namespace, p.Name, got, want)
	}
}

// rolledOutPods waits for the Deployment's rollout and returns its pods.
func (c *cluster) rolledOutPods(ctx context.Context, t *testing.T, d *appsv1.Deployment) []corev1.Pod {
	t.Helper()
	if _, err := c.kubectl(ctx, "", "rollout", "status", "-n", d.Namespace, "deployment/"+d.Name, "--timeout=60s"); err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	return c.runningPods(ctx, t, d.Namespace, sel.String(), deploymentReplicas(d))
}

func (c *cluster) replicaSets(ctx context.Context, t testing.TB, ns, dep string) []appsv1.ReplicaSet {
	t.Helper()
	l, err := c.cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + dep})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// exec runs argv in the pod's sandbox with `dnsplane exec`.
func (c *cluster) exec(ctx context.Context, p *corev1.Pod, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := append([]string{"exec", "--kubeconfig", c.admin, "--state-dir", c.nodeDir(p.Spec.NodeName), "-n", p.Namespace, p.Name, "--"}, argv...)
	out, err := exec.CommandContext(ctx, dnsplaneBin, args...).CombinedOutput()
	return string(out), err
}

func (c *cluster) nodeDir(name string) string {
	for _, n := range c.nodes {
		if n.name == name {
			return n.stateDir
		}
	}
	return ""
}

var validateLine = regexp.MustCompile(`(?m)^[^:]+:\d+:\d+: (.*)$`)

// checkRefused applies doc with kubectl, which must be refused with every
// error `dnsplane validate` (the rules and messages of dnsplane's API
// server) finds in it.
func (c *cluster) checkRefused(ctx context.Context, t *testing.T, doc string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, _ := exec.Command(dnsplaneBin, "validate", "-q", "-f", file).CombinedOutput()
	want := validateLine.FindAllStringSubmatch(string(ref), -1)
	if len(want) == 0 {
		t.Fatalf("dnsplane validate finds nothing wrong with\n%s\n%s", doc, ref)
	}
	out, err := c.kubectl(ctx, "", "apply", "--server-side", "-f", file)
	if err == nil {
		t.Fatalf("kubectl apply accepted\n%s", doc)
	}
	t.Logf("kubectl apply:\n%s", out)
	for _, w := range want {
		if !strings.Contains(out, w[1]) {
			t.Errorf("the refusal does not say %q (dnsplane's API server's error)", w[1])
		}
	}
}

// admissionLatency creates n Custom pods (through the webhook) and n of
// the same pods already in the webhook's output form (dnsPolicy None with
// the dnsConfig; the match conditions send them nowhere), interleaved, on
// the same server, and returns the mean time of a create of each. The
// creates are dry runs, as in BenchmarkAdmission: admission runs whole,
// webhooks included, and storage and scheduling add no noise.
func (c *cluster) admissionLatency(ctx context.Context, t testing.TB, ns string, n int) (with, without time.Duration) {
	t.Helper()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	// The rewritten form, from the webhook itself, so both pods are equal
	// once admitted.
	first, err := c.cs.CoreV1().Pods(ns).Create(ctx, customPod("latency-ref", customParams), dry)
	if err != nil {
		t.Fatal(err)
	}
	plain := &corev1.Pod{Spec: corev1.PodSpec{DNSPolicy: corev1.DNSNone, DNSConfig: first.Spec.DNSConfig,
		Containers: []corev1.Container{{Name: "c", Image: "example"}}}}
	for i := 0; i < n; i++ {
		p := customPod(fmt.Sprintf("with-%d", i), customParams)
		start := time.Now()
		if _, err := c.cs.CoreV1().Pods(ns).Create(ctx, p, dry); err != nil {
			t.Fatal(err)
		}
		with += time.Since(start)
		q := plain.DeepCopy()
		q.Name = fmt.Sprintf("without-%d", i)
		start = time.Now()
		if _, err := c.cs.CoreV1().Pods(ns).Create(ctx, q, dry); err != nil {
			t.Fatal(err)
		}
		without += time.Since(start)
	}
	return with / time.Duration(n), without / time.Duration(n)
}
