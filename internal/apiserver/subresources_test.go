package apiserver

import (
	"context"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestBinding(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	for _, name := range []string{"a", "b", "gated"} {
		p := pod(name)
		if name == "gated" {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
		}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(pod, node string) *corev1.Binding {
		return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	}
	if err := pods.Bind(ctx, bind("a", "n1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := pods.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "n1" || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != corev1.PodScheduled || got.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("after binding: node %q, conditions %+v", got.Spec.NodeName, got.Status.Conditions)
	}

	// The older form, POST …/bindings, names the pod in the body; the
	// answer is 201 with a Success Status.
	raw := ts.client.CoreV1().RESTClient()
	var code int
	res := raw.Post().Namespace(ns).Resource("bindings").Body(bind("b", "n2")).Do(ctx).StatusCode(&code)
	body, err := res.Raw()
	if err != nil || code != http.StatusCreated || !strings.Contains(string(body), `"status":"Success"`) || !strings.Contains(string(body), `"code":201`) {
		t.Errorf("legacy binding: %d %s %v", code, body, err)
	}
	if got, _ := pods.Get(ctx, "b", metav1.GetOptions{}); got.Spec.NodeName != "n2" {
		t.Errorf("legacy binding: node %q", got.Spec.NodeName)
	}

	for _, tc := range []struct {
		name    string
		do      func() error
		code    int32
		message string
	}{
		{"already assigned", func() error { return pods.Bind(ctx, bind("a", "n2"), metav1.CreateOptions{}) },
			409, `Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"`},
		{"gated", func() error { return pods.Bind(ctx, bind("gated", "n2"), metav1.CreateOptions{}) },
			409, `Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates`},
		{"missing pod", func() error { return pods.Bind(ctx, bind("nope", "n1"), metav1.CreateOptions{}) },
			404, `pods "nope" not found`},
		{"name differs from URL", func() error {
			return raw.Post().Namespace(ns).Resource("pods").Name("gated").SubResource("binding").Body(bind("a", "n1")).Do(ctx).Error()
		}, 400, "name in URL does not match name in Binding object"},
		{"no target", func() error { return pods.Bind(ctx, bind("gated", ""), metav1.CreateOptions{}) },
			400, "target.name: Required value"},
		{"target not a node", func() error {
			b := bind("gated", "n1")
			b.Target.Kind = "Pod"
			return pods.Bind(ctx, b, metav1.CreateOptions{})
		}, 400, `target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"`},
		{"uid precondition", func() error {
			b := bind("gated", "n1")
			b.UID = types.UID("other")
			return pods.Bind(ctx, b, metav1.CreateOptions{})
		}, 409, `Operation cannot be fulfilled on pods "gated": Precondition failed: UID in precondition: other, UID in object meta: `},
		{"get", func() error {
			return raw.Get().Namespace(ns).Resource("pods").Name("a").SubResource("binding").Do(ctx).Error()
		}, 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := revision(t, ts, ns)
			err := tc.do()
			code, msg := apiStatusOf(err)
			if code != tc.code || !strings.HasPrefix(msg, tc.message) {
				t.Errorf("got %d %q, want %d %q", code, msg, tc.code, tc.message)
			}
			if after := revision(t, ts, ns); after != before {
				t.Errorf("revision moved from %s to %s", before, after)
			}
		})
	}
}

func TestScale(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	if _, err := ts.client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc"}, Spec: corev1.ReplicationControllerSpec{
		Replicas: ptr.To[int32](1), Selector: labels, Template: &tmpl}}
	if _, err := ts.client.CoreV1().ReplicationControllers(ns).Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deploys := ts.client.AppsV1().Deployments(ns)
	sc, err := deploys.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Replicas != 2 || sc.Status.Selector != "app=web" || sc.Name != "web" {
		t.Errorf("scale %+v", sc)
	}
	sc.Spec.Replicas = 3
	if sc, err = deploys.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{}); err != nil || sc.Spec.Replicas != 3 {
		t.Fatalf("update: %+v %v", sc, err)
	}
	if _, err := deploys.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	got, _ := deploys.Get(ctx, "web", metav1.GetOptions{})
	if ptr.Deref(got.Spec.Replicas, 0) != 5 || got.Generation != 3 {
		t.Errorf("deployment replicas %v generation %d, want 5 and 3", got.Spec.Replicas, got.Generation)
	}
	rcs, err := ts.client.CoreV1().ReplicationControllers(ns).GetScale(ctx, "rc", metav1.GetOptions{})
	if err != nil || rcs.Status.Selector != "app=web" || rcs.Spec.Replicas != 1 {
		t.Errorf("rc scale %+v %v", rcs, err)
	}

	raw := ts.client.AppsV1().RESTClient()
	for _, tc := range []struct {
		name    string
		do      func() error
		code    int32
		message string
	}{
		{"negative", func() error {
			_, err := deploys.UpdateScale(ctx, "web", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: autoscalingv1.ScaleSpec{Replicas: -1}}, metav1.UpdateOptions{})
			return err
		}, 422, `Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		{"missing", func() error { _, err := deploys.GetScale(ctx, "nope", metav1.GetOptions{}); return err },
			404, `deployments.apps "nope" not found`},
		{"update missing", func() error {
			_, err := deploys.UpdateScale(ctx, "nope", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "nope"}}, metav1.UpdateOptions{})
			return err
		}, 404, `deployments.apps "nope" not found`},
		{"name differs", func() error {
			return raw.Put().Namespace(ns).Resource("deployments").Name("web").SubResource("scale").
				Body(&autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"}, ObjectMeta: metav1.ObjectMeta{Name: "other"}}).Do(ctx).Error()
		}, 400, "the name of the object (other) does not match the name on the URL (web)"},
		{"stale resourceVersion", func() error {
			_, err := deploys.UpdateScale(ctx, "web", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "1"}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}, metav1.UpdateOptions{})
			return err
		}, 409, `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`},
		{"uid", func() error {
			_, err := deploys.UpdateScale(ctx, "web", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "x"}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}, metav1.UpdateOptions{})
			return err
		}, 409, `Operation cannot be fulfilled on deployments/scale.apps "web": Precondition failed: UID in precondition: x, UID in object meta: `},
		{"delete", func() error {
			return raw.Delete().Namespace(ns).Resource("deployments").Name("web").SubResource("scale").Do(ctx).Error()
		}, 405, ""},
		{"not scalable", func() error {
			return raw.Get().Namespace(ns).Resource("daemonsets").Name("web").SubResource("scale").Do(ctx).Error()
		}, 404, "the server could not find the requested resource"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := revision(t, ts, ns)
			code, msg := apiStatusOf(tc.do())
			if code != tc.code || !strings.HasPrefix(msg, tc.message) {
				t.Errorf("got %d %q, want %d %q", code, msg, tc.code, tc.message)
			}
			if after := revision(t, ts, ns); after != before {
				t.Errorf("revision moved from %s to %s", before, after)
			}
		})
	}
}
