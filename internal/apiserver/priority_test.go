package apiserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
)

// TestPriorityAdmission: upstream's Priority plugin runs on the served
// pods (docs/apiserver.md, "Admission"): a pod naming
// system-cluster-critical gets its priority, one naming no class gets 0
// (the shared server has no globalDefault class, and no test makes one),
// an update keeps the priority, dnsParams survive, and an unknown class is
// kube's 403.
func TestPriorityAdmission(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	critical := waitSystemClass(t, ts, scheduling.SystemClusterCritical)
	pods := ts.client.CoreV1().Pods(ns)

	p := pod("critical")
	p.Spec.PriorityClassName = critical.Name
	got, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Priority == nil || *got.Spec.Priority != 2000000000 || got.Spec.PreemptionPolicy == nil || *got.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("priority %v, preemptionPolicy %v; want 2000000000, PreemptLowerPriority", got.Spec.Priority, got.Spec.PreemptionPolicy)
	}

	// An update that leaves the fields out keeps them, as upstream's plugin
	// does (validation would refuse the change otherwise).
	got.Labels["tier"] = "front"
	got.Spec.Priority, got.Spec.PreemptionPolicy = nil, nil
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update without the priority: %v", err)
	}
	if updated.Spec.Priority == nil || *updated.Spec.Priority != 2000000000 {
		t.Errorf("update: priority %v, want 2000000000", updated.Spec.Priority)
	}

	none, err := pods.Create(ctx, pod("none"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if none.Spec.Priority == nil || *none.Spec.Priority != 0 || none.Spec.PriorityClassName != "" {
		t.Errorf("no class: priority %v, class %q; want 0, none", none.Spec.Priority, none.Spec.PriorityClassName)
	}

	// dnsplane's own field is not in kube's internal Pod the plugin reads:
	// it is stored as sent.
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"custom"},"spec":{"priorityClassName":"system-cluster-critical",` +
		`"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)"]}},"containers":[{"name":"c","image":"x"}]}}`
	raw, err := ts.client.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/"+ns+"/pods").
		SetHeader("Content-Type", "application/json").Body([]byte(body)).DoRaw(ctx)
	if err != nil {
		t.Fatalf("pod with dnsParams: %v: %s", err, raw)
	}
	var custom struct {
		Spec struct {
			Priority  *int32          `json:"priority"`
			DNSParams json.RawMessage `json:"dnsParams"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &custom); err != nil {
		t.Fatal(err)
	}
	if custom.Spec.Priority == nil || *custom.Spec.Priority != 2000000000 || string(custom.Spec.DNSParams) != `{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)"]}}` {
		t.Errorf("pod with dnsParams: priority %v, dnsParams %s", custom.Spec.Priority, custom.Spec.DNSParams)
	}

	unknown := pod("unknown")
	unknown.Spec.PriorityClassName = "no-such-class"
	_, err = pods.Create(ctx, unknown, metav1.CreateOptions{})
	if want := `pods "unknown" is forbidden: no PriorityClass with name no-such-class was found`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("unknown class: %v, want the 403 %q", err, want)
	}
}

// waitSystemClass creates the system class name, as internal/controlplane's
// bootstrap does on a real server (this test server makes none), unless
// it exists, and waits until the server's informer, which admission reads,
// has it: kube's Priority plugin has no live lookup, a class created a
// moment ago may not be seen yet.
func waitSystemClass(t *testing.T, ts *testServer, name string) *schedulingv1.PriorityClass {
	t.Helper()
	ctx := context.Background()
	var want *schedulingv1.PriorityClass
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		if pc.Name == name {
			want = pc.DeepCopy()
		}
	}
	if want == nil {
		t.Fatalf("%s is not a system priority class", name)
	}
	if _, err := ts.client.SchedulingV1().PriorityClasses().Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	lister := ts.run.informers.Scheduling().V1().PriorityClasses().Lister()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := lister.Get(name)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the informer has no PriorityClass %s: %v", name, err)
	}
	return want
}
