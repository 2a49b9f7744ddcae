package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// TestCluster is issue 20's user path on one `dnsplane up` with DNS on
// port 53: what kubectl does in kind for Deployments, Services,
// StatefulSets, Jobs, garbage collection and namespaces works the same,
// with the controllers and scheduler up runs in its process, and the
// names the controllers' objects give resolve through the node cache by
// glibc and musl in a pod (dnsplane exec). Each subtest has its namespace
// and runs beside the others.
func TestCluster(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	requireKubectl(t)
	musl := buildGai(t, "musl-gcc")
	host := startZoneServer(t, nil, 0)
	hostConf := writeFile(t, "host-resolv.conf", "nameserver 127.0.0.1\nsearch corp.test\noptions ndots:1\n")
	u := startCluster(t, controllerConfig{}, loopback53(t, 14), loopback53(t, 24),
		"--upstream", host.Addr, "--upstream-resolv-conf", hostConf)
	kc := u.Kubeconfig
	cs := clientFor(t, kc)
	// inNS is the cluster seen from a namespace of the subtest, for
	// resolve and execInPod.
	inNS := func(t *testing.T) *agentCluster {
		t.Helper()
		return &agentCluster{upServer: u, Namespace: newNamespace(t, kc)}
	}

	// create deployment → ReplicaSet → pods bound by the scheduler (no
	// nodeName in the template) and Running → rollout status → expose →
	// EndpointSlice and Endpoints → the Service name resolves; scale up
	// and down.
	t.Run("deployment", func(t *testing.T) {
		t.Parallel()
		c := inNS(t)
		ns := c.Namespace
		wantKubectl(t, kc, "", ok("deployment.apps/web created"), "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=80")
		rolloutStatus(t, kc, ns, "deployment/web")
		rss, err := cs.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rss.Items) != 1 || len(rss.Items[0].OwnerReferences) != 1 || rss.Items[0].OwnerReferences[0].Name != "web" {
			t.Fatalf("ReplicaSets of deployment web: %+v", rss.Items)
		}
		pods := waitRunning(t, cs, ns, "app=web", 2)
		for _, p := range pods {
			if p.Spec.NodeName != upNode || !strings.HasPrefix(p.Name, rss.Items[0].Name+"-") {
				t.Errorf("pod %s of ReplicaSet %s on node %q, want %s", p.Name, rss.Items[0].Name, p.Spec.NodeName, upNode)
			}
		}

		wantKubectl(t, kc, "", ok("service/web exposed"), "-n", ns, "expose", "deployment", "web", "--port=80")
		waitSlices(t, cs, ns, "web", podIPs(pods))
		waitUntil(t, time.Minute, "Endpoints web", func(ctx context.Context) (bool, string) {
			ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, "web", metav1.GetOptions{}) //nolint:staticcheck // kube still writes v1 Endpoints; users read them
			if err != nil {
				return false, err.Error()
			}
			var ips []string
			for _, s := range ep.Subsets {
				for _, a := range s.Addresses {
					ips = append(ips, a.IP)
				}
			}
			slices.Sort(ips)
			return slices.Equal(ips, podIPs(pods)), fmt.Sprintf("%v, want %v", ips, podIPs(pods))
		})
		ip := mustKubectl(t, kc, "", "-n", ns, "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
		for _, resolver := range []string{"glibc", "musl"} {
			for _, name := range []string{"web", "web." + ns + ".svc.cluster.local"} {
				c.waitResolves(t, resolver, musl, pods[0].Name, name, []string{ip})
			}
		}

		wantKubectl(t, kc, "", ok("deployment.apps/web scaled"), "-n", ns, "scale", "deployment/web", "--replicas=3")
		pods = waitRunning(t, cs, ns, "app=web", 3)
		waitSlices(t, cs, ns, "web", podIPs(pods))
		wantKubectl(t, kc, "", ok("deployment.apps/web scaled"), "-n", ns, "scale", "deployment/web", "--replicas=1")
		pods = waitRunning(t, cs, ns, "app=web", 1)
		waitSlices(t, cs, ns, "web", podIPs(pods))
		rolloutStatus(t, kc, ns, "deployment/web")

		// A rolling update makes a second ReplicaSet and moves the pods
		// (and the slice) to it.
		wantKubectl(t, kc, "", ok("deployment.apps/web image updated"), "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.27")
		rolloutStatus(t, kc, ns, "deployment/web")
		pods = waitRunning(t, cs, ns, "app=web", 1)
		if got := pods[0].Spec.Containers[0].Image; got != "nginx:1.27" {
			t.Errorf("pod %s runs image %q after the rolling update, want nginx:1.27", pods[0].Name, got)
		}
		waitSlices(t, cs, ns, "web", podIPs(pods))
		if rss := mustKubectl(t, kc, "", "-n", ns, "get", "replicasets", "-l", "app=web", "-o", "name"); len(rows(rss)) != 2 {
			t.Errorf("ReplicaSets after a rolling update: %q, want two", rss)
		}
	})

	// kubectl rollout undo copies the previous ReplicaSet's template back;
	// it patches the Deployment's annotations, which the deployment
	// controller keeps its revision in.
	t.Run("rollout undo", func(t *testing.T) {
		t.Parallel()
		// The deployment controller writes deployment.kubernetes.io/revision
		// through UpdateStatus; /status of the workload kinds keeps
		// annotations as kube's status strategies do (it used to drop them,
		// and kubectl's JSON patch failed: "replace operation does not
		// apply: doc is missing key: /metadata/annotations").
		ns := inNS(t).Namespace
		mustKubectl(t, kc, "", "-n", ns, "create", "deployment", "web", "--image=nginx")
		rolloutStatus(t, kc, ns, "deployment/web")
		mustKubectl(t, kc, "", "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.27")
		rolloutStatus(t, kc, ns, "deployment/web")
		if got := jsonpath(t, kc, ns, "deployment", "web", `{.metadata.annotations.deployment\.kubernetes\.io/revision}`); got != "2" {
			t.Errorf("revision after a rolling update: %q, want 2", got)
		}
		wantKubectl(t, kc, "", ok("deployment.apps/web rolled back"), "-n", ns, "rollout", "undo", "deployment/web")
		rolloutStatus(t, kc, ns, "deployment/web")
		if pods := waitRunning(t, cs, ns, "app=web", 1); pods[0].Spec.Containers[0].Image != "nginx" {
			t.Errorf("pod %s runs image %q after undo, want nginx", pods[0].Name, pods[0].Spec.Containers[0].Image)
		}
	})

	// kubectl run without a node: the scheduler binds the pod to up's node
	// and says so in a Scheduled event.
	t.Run("run", func(t *testing.T) {
		t.Parallel()
		ns := inNS(t).Namespace
		wantKubectl(t, kc, "", ok("pod/solo created"), "-n", ns, "run", "solo", "--image=nginx")
		mustKubectl(t, kc, "", "-n", ns, "wait", "pod/solo", "--for=condition=Ready", "--timeout=50s")
		if got := jsonpath(t, kc, ns, "pod", "solo", "{.spec.nodeName} {.status.phase}"); got != upNode+" Running" {
			t.Errorf("pod solo: nodeName and phase %q, want %s Running", got, upNode)
		}
		waitUntil(t, time.Minute, "the Scheduled event of pod solo", func(context.Context) (bool, string) {
			out := mustKubectl(t, kc, "", "-n", ns, "get", "events", "--field-selector", "reason=Scheduled,involvedObject.name=solo", "-o", "jsonpath={.items[*].message}")
			return out == "Successfully assigned "+ns+"/solo to "+upNode, out
		})
	})

	// Pod Security admission as kube's: a Deployment whose template
	// violates the namespace's enforce level is created with a warning, and
	// its ReplicaSet's pods are refused, which the ReplicaSet controller
	// reports in a ReplicaFailure condition and FailedCreate events;
	// labelling a stricter level warns about the running pods it would
	// refuse, which keep running.
	t.Run("pod security", func(t *testing.T) {
		t.Parallel()
		ns := inNS(t).Namespace
		wantKubectl(t, kc, "", ok("namespace/"+ns+" labeled"), "label", "ns", ns, "pod-security.kubernetes.io/enforce=baseline")
		const violation = `PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`
		wantKubectl(t, kc, hostNetworkDeployment("host"), run{stdout: "deployment.apps/host created\n", stderr: "Warning: would violate " + violation + "\n"},
			"-n", ns, "create", "-f", "-")
		waitUntil(t, time.Minute, "the ReplicaFailure condition of deployment host's ReplicaSet", func(ctx context.Context) (bool, string) {
			rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=host"})
			if err != nil || len(rss.Items) != 1 {
				return false, fmt.Sprintf("ReplicaSets %v, %v", rss, err)
			}
			for _, c := range rss.Items[0].Status.Conditions {
				if c.Type == "ReplicaFailure" && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate" &&
					strings.HasPrefix(c.Message, `pods "`+rss.Items[0].Name+"-") && strings.HasSuffix(c.Message, `" is forbidden: violates `+violation) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("conditions %+v", rss.Items[0].Status.Conditions)
		})
		waitUntil(t, time.Minute, "a FailedCreate event of deployment host's ReplicaSet", func(context.Context) (bool, string) {
			out := mustKubectl(t, kc, "", "-n", ns, "get", "events", "--field-selector", "reason=FailedCreate,involvedObject.kind=ReplicaSet", "-o", "jsonpath={.items[*].message}")
			return strings.HasPrefix(out, "Error creating: pods ") && strings.Contains(out, "is forbidden: violates "+violation), out
		})
		if pods := mustKubectl(t, kc, "", "-n", ns, "get", "pods", "-l", "app=host", "-o", "name"); pods != "" {
			t.Errorf("pods of deployment host: %q, want none", pods)
		}

		wantKubectl(t, kc, "", ok("deployment.apps/web created"), "-n", ns, "create", "deployment", "web", "--image=nginx")
		pods := waitRunning(t, cs, ns, "app=web", 1)
		wantKubectl(t, kc, "", run{stdout: "namespace/" + ns + " labeled\n", stderr: fmt.Sprintf("Warning: existing pods in namespace %q violate the new PodSecurity enforce level \"restricted:latest\"\n", ns) +
			"Warning: " + pods[0].Name + ": " + restrictedReasons + "\n"},
			"label", "--overwrite", "ns", ns, "pod-security.kubernetes.io/enforce=restricted")
		waitRunning(t, cs, ns, "app=web", 1)
	})

	// kubectl delete deployment collects its ReplicaSet and pods (the
	// garbage collector, background cascade); --cascade=orphan keeps them,
	// no longer owned.
	t.Run("delete deployment", func(t *testing.T) {
		t.Parallel()
		ns := inNS(t).Namespace
		for _, d := range []string{"gone", "orphaned"} {
			mustKubectl(t, kc, "", "-n", ns, "create", "deployment", d, "--image=nginx", "--replicas=2")
		}
		gonePods := waitRunning(t, cs, ns, "app=gone", 2)
		orphanedPods := waitRunning(t, cs, ns, "app=orphaned", 2)

		wantKubectl(t, kc, "", ok(`deployment.apps "gone" deleted`), "-n", ns, "delete", "deployment", "gone")
		waitUntil(t, 2*time.Minute, "the ReplicaSet and pods of deployment gone collected", func(ctx context.Context) (bool, string) {
			rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=gone"})
			if err != nil {
				return false, err.Error()
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=gone"})
			if err != nil {
				return false, err.Error()
			}
			return len(rss.Items) == 0 && len(pods.Items) == 0, fmt.Sprintf("%d ReplicaSets, pods %s", len(rss.Items), podSummary(pods.Items))
		})
		t.Logf("collected pods %s", podSummary(gonePods))

		wantKubectl(t, kc, "", ok(`deployment.apps "orphaned" deleted`), "-n", ns, "delete", "deployment", "orphaned", "--cascade=orphan")
		waitUntil(t, time.Minute, "the ReplicaSet of deployment orphaned without owner", func(ctx context.Context) (bool, string) {
			rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=orphaned"})
			if err != nil {
				return false, err.Error()
			}
			return len(rss.Items) == 1 && len(rss.Items[0].OwnerReferences) == 0, fmt.Sprintf("%+v", rss.Items)
		})
		if _, err := cs.AppsV1().Deployments(ns).Get(t.Context(), "orphaned", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("deployment orphaned after its delete: %v", err)
		}
		// The ReplicaSet still owns the same pods, which still run.
		if got := waitRunning(t, cs, ns, "app=orphaned", 2); !slices.Equal(podNames(got), podNames(orphanedPods)) {
			t.Errorf("pods after --cascade=orphan %s, want %s", podSummary(got), podSummary(orphanedPods))
		}
	})

	// kubectl delete namespace: the namespace goes Terminating while the
	// namespace controller empties it (here of a Deployment's pods the
	// agent has to finish), then away.
	t.Run("delete namespace", func(t *testing.T) {
		t.Parallel()
		ns := inNS(t).Namespace
		mustKubectl(t, kc, "", "-n", ns, "create", "deployment", "d", "--image=nginx")
		waitRunning(t, cs, ns, "app=d", 1)
		w, err := cs.CoreV1().Namespaces().Watch(t.Context(), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", ns).String()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		wantKubectl(t, kc, "", ok(`namespace "`+ns+`" deleted`), "delete", "namespace", ns, "--wait=false")
		var phases []string
		timeout := time.After(2 * time.Minute)
		for done := false; !done; {
			select {
			case ev, open := <-w.ResultChan():
				if !open {
					t.Fatalf("the watch of namespace %s ended; phases %v", ns, phases)
				}
				if n, isNS := ev.Object.(*corev1.Namespace); isNS {
					phases = append(phases, fmt.Sprintf("%s %s", ev.Type, n.Status.Phase))
				}
				done = ev.Type == watch.Deleted
			case <-timeout:
				t.Fatalf("namespace %s not gone within 2m; phases %v", ns, phases)
			}
		}
		if !slices.Contains(phases, "MODIFIED Terminating") {
			t.Errorf("namespace %s went %v, want Terminating before it went away", ns, phases)
		}
		wantKubectl(t, kc, "", failed(`Error from server (NotFound): namespaces "`+ns+`" not found`), "get", "namespace", ns)
	})

	// A StatefulSet web with its headless Service web: web-0.web.<ns>.svc
	// resolves to pod web-0's IP, the Service's name to both pods', and
	// kube's SRV records name each pod per port.
	t.Run("statefulset", func(t *testing.T) {
		t.Parallel()
		c := inNS(t)
		ns := c.Namespace
		mustKubectl(t, kc, `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
  selector:
    app: web
  ports:
  - {name: http, port: 80}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: c
        image: nginx
`, "-n", ns, "apply", "-f", "-")
		rolloutStatus(t, kc, ns, "statefulset/web")
		pods := waitRunning(t, cs, ns, "app=web", 2)
		ipOf := map[string]string{}
		for _, p := range pods {
			ipOf[p.Name] = p.Status.PodIP
		}
		if len(ipOf["web-0"]) == 0 || len(ipOf["web-1"]) == 0 {
			t.Fatalf("StatefulSet pods %s, want web-0 and web-1", podSummary(pods))
		}
		waitSlices(t, cs, ns, "web", podIPs(pods))
		for _, resolver := range []string{"glibc", "musl"} {
			c.waitResolves(t, resolver, musl, "web-1", "web-0.web."+ns+".svc.cluster.local", []string{ipOf["web-0"]})
			// The pod's search list completes a name relative to its
			// namespace.
			c.waitResolves(t, resolver, musl, "web-1", "web-0.web", []string{ipOf["web-0"]})
			c.waitResolves(t, resolver, musl, "web-0", "web", podIPs(pods))
		}
		svc := "web." + ns + ".svc.cluster.local."
		waitAnswers(t, u.NodeCache, "_http._tcp."+svc, dns.TypeSRV, []string{"web-0." + svc + " 80", "web-1." + svc + " 80"})
	})

	// A headless Service over a Deployment's pods and a pod with hostname
	// and subdomain: its name has the ready pods' IPs, SRV records per
	// named port, and hostname.subdomain names the pod.
	t.Run("headless", func(t *testing.T) {
		t.Parallel()
		c := inNS(t)
		ns := c.Namespace
		mustKubectl(t, kc, `apiVersion: v1
kind: Service
metadata:
  name: boxes
spec:
  clusterIP: None
  selector:
    role: box
  ports:
  - {name: http, port: 80}
  - {name: dns, port: 53, protocol: UDP}
---
apiVersion: v1
kind: Pod
metadata:
  name: box
  labels:
    role: box
spec:
  hostname: box1
  subdomain: boxes
  containers:
  - name: c
    image: nginx
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: crates
spec:
  replicas: 2
  selector:
    matchLabels:
      role: box
      app: crates
  template:
    metadata:
      labels:
        role: box
        app: crates
    spec:
      containers:
      - name: c
        image: nginx
`, "-n", ns, "apply", "-f", "-")
		pods := waitRunning(t, cs, ns, "role=box", 3)
		waitSlices(t, cs, ns, "boxes", podIPs(pods))
		var boxIP, crate string
		for _, p := range pods {
			if p.Name == "box" {
				boxIP = p.Status.PodIP
			} else {
				crate = p.Name
			}
		}
		for _, resolver := range []string{"glibc", "musl"} {
			c.waitResolves(t, resolver, musl, crate, "boxes", podIPs(pods))
			c.waitResolves(t, resolver, musl, crate, "box1.boxes", []string{boxIP})
		}
		// A pod without a hostname is named by its dashed IP (kube's DNS
		// specification, 2.4.2).
		svc := "boxes." + ns + ".svc.cluster.local."
		target := func(p corev1.Pod) string {
			if p.Name == "box" {
				return "box1." + svc
			}
			return strings.ReplaceAll(p.Status.PodIP, ".", "-") + "." + svc
		}
		for port, q := range map[string]string{"80": "_http._tcp." + svc, "53": "_dns._udp." + svc} {
			var want []string
			for _, p := range pods {
				want = append(want, target(p)+" "+port)
			}
			slices.Sort(want)
			waitAnswers(t, u.NodeCache, q, dns.TypeSRV, want)
		}
	})

	// A Job's pod runs and never completes: there is no container to exit
	// (docs/controllers.md). The Job stays active with its pod ready, and
	// the pod says why.
	t.Run("job", func(t *testing.T) {
		t.Parallel()
		ns := inNS(t).Namespace
		wantKubectl(t, kc, "", ok("job.batch/once created"), "-n", ns, "create", "job", "once", "--image=busybox", "--", "true")
		pods := waitRunning(t, cs, ns, "job-name=once", 1)
		if msg := pods[0].Status.Message; !strings.Contains(msg, "no containers run on this node") {
			t.Errorf("the Job's pod says %q, want that no containers run", msg)
		}
		waitUntil(t, time.Minute, "Job once active and ready", func(ctx context.Context) (bool, string) {
			j, err := cs.BatchV1().Jobs(ns).Get(ctx, "once", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			s := j.Status
			return s.Active == 1 && s.Ready != nil && *s.Ready == 1, fmt.Sprintf("%+v", s)
		})
		j, err := cs.BatchV1().Jobs(ns).Get(t.Context(), "once", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status.Succeeded != 0 || j.Status.Failed != 0 || j.Status.CompletionTime != nil || len(j.Status.Conditions) != 0 {
			t.Errorf("Job once: %+v, want no completion, failure or condition", j.Status)
		}
	})

	// A CronJob makes a Job at its next minute, whose pod runs (and, like
	// any Job's, never completes).
	t.Run("cronjob", func(t *testing.T) {
		t.Parallel()
		ns := inNS(t).Namespace
		wantKubectl(t, kc, "", ok("cronjob.batch/tick created"), "-n", ns, "create", "cronjob", "tick", "--image=busybox", "--schedule=* * * * *", "--", "true")
		var job string
		waitUntil(t, 2*time.Minute, "a Job of CronJob tick", func(ctx context.Context) (bool, string) {
			jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, j := range jobs.Items {
				if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == "CronJob" && ref.Name == "tick" {
					job = j.Name
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d Jobs", len(jobs.Items))
		})
		waitRunning(t, cs, ns, "job-name="+job, 1)
		waitUntil(t, time.Minute, "CronJob tick's status", func(ctx context.Context) (bool, string) {
			cj, err := cs.BatchV1().CronJobs(ns).Get(ctx, "tick", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			s := cj.Status
			return len(s.Active) >= 1 && s.Active[0].Name == job && s.LastScheduleTime != nil, fmt.Sprintf("%+v", s)
		})
		// Suspended, it makes no more Jobs while the subtests around it run.
		mustKubectl(t, kc, "", "-n", ns, "patch", "cronjob", "tick", "--type=merge", "-p", `{"spec":{"suspend":true}}`)
	})

	// A Deployment of dnsPolicy Custom: its pods get the substituted
	// search list; a change of dnsParams alone rolls out and the new pods
	// get the new file (docs/pod-dns.md, "dnsParams and controllers").
	t.Run("custom dns", func(t *testing.T) {
		t.Parallel()
		c := inNS(t)
		ns := c.Namespace
		const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: custom
spec:
  replicas: 1
  selector:
    matchLabels:
      app: custom
  template:
    metadata:
      labels:
        app: custom
    spec:
      dnsPolicy: Custom
      dnsParams:
        custom:
          search: [%s]
          options: [%s]
      containers:
      - name: c
        image: nginx
`
		servers := fmt.Sprintf("nameserver %s\nnameserver %s\n", hostOf(u.NodeCache), hostOf(u.ClusterDNS))
		for i, step := range []struct{ search, options, want string }{
			{`"$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"`, `"ndots:3"`,
				"search " + ns + ".svc.cluster.local corp.test\n" + servers + "options ndots:3\n"},
			{`"svc.$(CLUSTER)", "$(NAMESPACE).svc.$(CLUSTER)"`, `"ndots:2"`,
				"search svc.cluster.local " + ns + ".svc.cluster.local\n" + servers + "options ndots:2\n"},
		} {
			mustKubectl(t, kc, fmt.Sprintf(deployment, step.search, step.options), "-n", ns, "apply", "-f", "-")
			rolloutStatus(t, kc, ns, "deployment/custom")
			if got := jsonpath(t, kc, ns, "deployment", "custom", "{.metadata.generation}"); got != fmt.Sprint(i+1) {
				t.Errorf("step %d: deployment generation %s", i, got)
			}
			waitUntil(t, 2*time.Minute, fmt.Sprintf("step %d: the pod's resolv.conf", i), func(ctx context.Context) (bool, string) {
				pods, err := livePods(ctx, cs, ns, "app=custom")
				if err != nil || len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
					return false, fmt.Sprintf("pods %s, %v", podSummary(pods), err)
				}
				out, errOut, code := c.execInPod(t, pods[0].Name, "cat", "/etc/resolv.conf")
				return code == 0 && out == step.want, fmt.Sprintf("%s: exit %d %s\n%s\nwant:\n%s", pods[0].Name, code, errOut, out, step.want)
			})
		}
		if rss := mustKubectl(t, kc, "", "-n", ns, "get", "replicasets", "-l", "app=custom", "-o", "name"); len(rows(rss)) != 2 {
			t.Errorf("ReplicaSets after a dnsParams change: %q, want two revisions", rss)
		}
	})
}

// podNames are the pods' names, sorted.
func podNames(pods []corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}
