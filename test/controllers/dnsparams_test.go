package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"k8s.io/utils/ptr"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// cluster is a control plane running upstream's deployment, ReplicaSet,
// StatefulSet, DaemonSet and replication controllers in its process, as
// `up` runs them (internal/controllers, kube-controller-manager's
// defaults). Their clients are k8s.io/api's: they know no dnsParams.
type cluster struct {
	kube kubernetes.Interface // a client as the controllers' (k8s.io/api)
	dns  versioned.Interface  // dnsplane's types, with dnsParams
	ns   string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Roles: []controlplane.Role{controllersrole.New(controllers.Options{Controllers: []string{
		names.DeploymentController, names.ReplicaSetController, names.StatefulSetController,
		names.DaemonSetController, names.ReplicationControllerController,
	}})}})
	dns, err := versioned.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	ns := "dnsparams"
	if _, err := ts.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &cluster{kube: ts.Client, dns: dns, ns: ns}
}

func custom(search ...string) *dpcorev1.PodDNSParams {
	return &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: search, Options: []string{"ndots:2"}}}
}

func podTemplate(app string, p *dpcorev1.PodDNSParams) dpcorev1.PodTemplateSpec {
	t := dpcorev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}}
	t.Spec.Containers = []corev1.Container{{Name: "c", Image: "nginx"}}
	t.Spec.DNSPolicy = dpcorev1.DNSCustom
	t.Spec.DNSParams = p
	return t
}

// podsWith reports whether exactly n pods match sel and all carry want.
func (c *cluster) podsWith(ctx context.Context, sel labels.Selector, n int, want *dpcorev1.PodDNSParams) (bool, error) {
	pods, err := c.dns.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return false, err
	}
	live := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		live++
		if !reflect.DeepEqual(p.Spec.DNSParams, want) {
			return false, fmt.Errorf("pod %s has dnsParams %s, want %s", p.Name, enc(p.Spec.DNSParams), enc(want))
		}
	}
	return live == n, nil
}

func enc(p *dpcorev1.PodDNSParams) string {
	if p == nil {
		return "<nil>"
	}
	return dnsparams.Encode(p)
}

// replicaSets returns the Deployment's ReplicaSets by pod-template-hash.
func (c *cluster) replicaSets(ctx context.Context, app string) (map[string]dpappsv1.ReplicaSet, error) {
	list, err := c.dns.AppsV1().ReplicaSets(c.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil, err
	}
	out := map[string]dpappsv1.ReplicaSet{}
	for _, rs := range list.Items {
		out[rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]] = rs
	}
	return out, nil
}

// TestDeploymentKeepsDNSParams: a Deployment with dnsPolicy Custom, run by
// upstream's deployment and ReplicaSet controllers. Its ReplicaSet and
// pods get its dnsParams, scaling (the controllers' PUTs) keeps them, a
// dnsParams-only change rolls out a new ReplicaSet whose pods have the new
// ones, and kubectl rollout undo's patch brings the old ones back.
func TestDeploymentKeepsDNSParams(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	a, b := custom("$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"), custom("b.example.com")
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	d := &dpappsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	d.Spec.Replicas = ptr.To[int32](1)
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	d.Spec.Template = podTemplate("web", a)
	if _, err := c.dns.AppsV1().Deployments(c.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var first string
	testkit.Poll(t, "a ReplicaSet with the Deployment's dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		rss, err := c.replicaSets(ctx, "web")
		if err != nil || len(rss) != 1 {
			return false, err
		}
		for hash, rs := range rss {
			if !reflect.DeepEqual(rs.Spec.Template.Spec.DNSParams, a) {
				return false, fmt.Errorf("ReplicaSet %s has dnsParams %s", rs.Name, enc(rs.Spec.Template.Spec.DNSParams))
			}
			first = hash
		}
		return true, nil
	})
	testkit.Poll(t, "a pod with the Deployment's dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		return c.podsWith(ctx, sel, 1, a)
	})

	// Scale through k8s.io/api's client: a PUT of the Deployment without
	// dnsParams, then the deployment controller's PUT of the ReplicaSet.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		kd, err := c.kube.AppsV1().Deployments(c.ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		kd.Spec.Replicas = ptr.To[int32](2)
		_, err = c.kube.AppsV1().Deployments(c.ns).Update(ctx, kd, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "two pods with the dnsParams after scaling", time.Minute, func(ctx context.Context) (bool, error) {
		return c.podsWith(ctx, sel, 2, a)
	})
	testkit.Poll(t, "the ReplicaSet scaled, dnsParams kept", time.Minute, func(ctx context.Context) (bool, error) {
		rss, err := c.replicaSets(ctx, "web")
		if err != nil {
			return false, err
		}
		rs := rss[first]
		if !reflect.DeepEqual(rs.Spec.Template.Spec.DNSParams, a) {
			return false, fmt.Errorf("ReplicaSet %s has dnsParams %s", rs.Name, enc(rs.Spec.Template.Spec.DNSParams))
		}
		return len(rss) == 1 && ptr.Deref(rs.Spec.Replicas, 0) == 2, nil
	})
	got, err := c.dns.AppsV1().Deployments(c.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Spec.Template.Spec.DNSParams, a) {
		t.Fatalf("after a PUT without the field, the Deployment has dnsParams %s", enc(got.Spec.Template.Spec.DNSParams))
	}

	// Change dnsParams alone: a new pod-template-hash, a new ReplicaSet.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := c.dns.AppsV1().Deployments(c.ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.DNSParams = b
		_, err = c.dns.AppsV1().Deployments(c.ns).Update(ctx, d, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var second string
	testkit.Poll(t, "a second ReplicaSet with the new dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		rss, err := c.replicaSets(ctx, "web")
		if err != nil || len(rss) != 2 {
			return false, err
		}
		for hash, rs := range rss {
			want := b
			if hash == first {
				want = a
			} else {
				second = hash
			}
			if !reflect.DeepEqual(rs.Spec.Template.Spec.DNSParams, want) {
				return false, fmt.Errorf("ReplicaSet %s has dnsParams %s, want %s", rs.Name, enc(rs.Spec.Template.Spec.DNSParams), enc(want))
			}
		}
		return true, nil
	})
	testkit.Poll(t, "the new ReplicaSet's pod has the new dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		return c.podsWith(ctx, labels.SelectorFromSet(labels.Set{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: second}), 1, b)
	})

	// kubectl rollout undo: a JSON patch that puts the old ReplicaSet's
	// template, as k8s.io/api reads it, back (kubectl's
	// polymorphichelpers.DeploymentRollbacker).
	old, err := c.kube.AppsV1().ReplicaSets(c.ns).List(ctx, metav1.ListOptions{LabelSelector: appsv1.DefaultDeploymentUniqueLabelKey + "=" + first})
	if err != nil || len(old.Items) != 1 {
		t.Fatal(old, err)
	}
	tmpl := old.Items[0].Spec.Template
	delete(tmpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/template", "value": tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.AppsV1().Deployments(c.ns).Patch(ctx, "web", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err = c.dns.AppsV1().Deployments(c.ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Spec.Template.Spec.DNSParams, a) {
		t.Fatalf("after rollout undo, the Deployment has dnsParams %s, want %s", enc(got.Spec.Template.Spec.DNSParams), enc(a))
	}
}

// TestStatefulSetKeepsDNSParams: upstream's StatefulSet controller makes
// its pods with the set's dnsParams, and a dnsParams-only change is a new
// ControllerRevision (a new update revision).
func TestStatefulSetKeepsDNSParams(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	a, b := custom("a.example.com"), custom("$(NAMESPACE).svc.$(CLUSTER)")
	ss := &dpappsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
	ss.Spec.Replicas = ptr.To[int32](1)
	ss.Spec.ServiceName = "db"
	ss.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	ss.Spec.Template = podTemplate("db", a)
	if _, err := c.dns.AppsV1().StatefulSets(c.ns).Create(ctx, ss, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "pod db-0 with the set's dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		return c.podsWith(ctx, labels.SelectorFromSet(labels.Set{"app": "db"}), 1, a)
	})
	var rev string
	testkit.Poll(t, "the set's update revision", time.Minute, func(ctx context.Context) (bool, error) {
		s, err := c.kube.AppsV1().StatefulSets(c.ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		rev = s.Status.UpdateRevision
		return rev != "", nil
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := c.dns.AppsV1().StatefulSets(c.ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Template.Spec.DNSParams = b
		_, err = c.dns.AppsV1().StatefulSets(c.ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "a new update revision", time.Minute, func(ctx context.Context) (bool, error) {
		s, err := c.kube.AppsV1().StatefulSets(c.ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		revs, err := c.kube.AppsV1().ControllerRevisions(c.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=db"})
		if err != nil {
			return false, err
		}
		return s.Status.UpdateRevision != "" && s.Status.UpdateRevision != rev && len(revs.Items) == 2, nil
	})
	// The controller's status writes keep the field.
	got, err := c.dns.AppsV1().StatefulSets(c.ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Spec.Template.Spec.DNSParams, b) {
		t.Fatalf("the StatefulSet has dnsParams %s, want %s", enc(got.Spec.Template.Spec.DNSParams), enc(b))
	}
}

// TestDaemonSetKeepsDNSParams: upstream's DaemonSet controller makes the
// node's pod with the set's dnsParams, and a dnsParams-only change rolls
// out: a new ControllerRevision, and the pod replaced by one with the new
// ones (no scheduler runs, so the pods stay unbound and go at once).
func TestDaemonSetKeepsDNSParams(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	if _, err := c.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, b := custom("a.example.com"), custom("$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)")
	sel := labels.SelectorFromSet(labels.Set{"app": "agent"})
	ds := &dpappsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"}}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	ds.Spec.Template = podTemplate("agent", a)
	if _, err := c.dns.AppsV1().DaemonSets(c.ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "the node's pod with the set's dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		return c.podsWith(ctx, sel, 1, a)
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := c.dns.AppsV1().DaemonSets(c.ns).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Template.Spec.DNSParams = b
		_, err = c.dns.AppsV1().DaemonSets(c.ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "the pod replaced by one with the new dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		ok, err := c.podsWith(ctx, sel, 1, b)
		if err != nil {
			return false, nil // the old pod, until it goes
		}
		return ok, nil
	})
	revs, err := c.kube.AppsV1().ControllerRevisions(c.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil || len(revs.Items) != 2 {
		t.Fatalf("want 2 ControllerRevisions, got %v, %v", revs, err)
	}
}

// TestMalformedAnnotationRefused: a hand-written annotation the API server
// cannot turn into dnsParams is a 422 at its path, with the message
// docs/pod-dns.md shows.
func TestMalformedAnnotationRefused(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{dnsparams.Annotation: `{"custom":{"searches":["a.com"]}}`}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}, DNSPolicy: dpcorev1.DNSCustom},
		}}}
	_, err := ts.Client.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{})
	const want = `Deployment.apps "web" is invalid: [spec.template.metadata.annotations[pod.dnsplane.io/dns-params]: Invalid value: "{\"custom\":{\"searches\":[\"a.com\"]}}": must be a JSON object of spec.dnsParams: unknown field "custom.searches", spec.template.spec.dnsParams: Required value: must be set when ` + "`dnsPolicy`" + ` is Custom]`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// TestReplicationControllerKeepsDNSParams: upstream's replication manager
// makes pods with the ReplicationController's dnsParams, and kubectl scale
// through k8s.io/api's client (a PUT without the field) keeps them.
func TestReplicationControllerKeepsDNSParams(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx := context.Background()
	a := custom("$(NAMESPACE).svc.$(CLUSTER)")
	sel := labels.SelectorFromSet(labels.Set{"app": "legacy"})
	tmpl := podTemplate("legacy", a)
	rc := &dpcorev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}
	rc.Spec.Replicas = ptr.To[int32](1)
	rc.Spec.Selector = map[string]string{"app": "legacy"}
	rc.Spec.Template = &tmpl
	if _, err := c.dns.CoreV1().ReplicationControllers(c.ns).Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "a pod with the dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		return c.podsWith(ctx, sel, 1, a)
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		k, err := c.kube.CoreV1().ReplicationControllers(c.ns).Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return err
		}
		k.Spec.Replicas = ptr.To[int32](2)
		_, err = c.kube.CoreV1().ReplicationControllers(c.ns).Update(ctx, k, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Poll(t, "two pods with the dnsParams", time.Minute, func(ctx context.Context) (bool, error) {
		return c.podsWith(ctx, sel, 2, a)
	})
}
