package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestEviction: pods/eviction with kube-apiserver's PDB check
// (k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go): codes,
// messages and causes as kube's, the budget's disruptionsAllowed taken and
// the pod recorded in disruptedPods, pods that are not running deleted
// without a look at budgets.
func TestEviction(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	unready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}}
	budget := func(name string, allowed, current, desired int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: current, DesiredHealthy: desired, ExpectedPods: current}}
	}
	const violates = "Cannot evict pod as it would violate the pod's disruption budget."
	for _, tc := range []struct {
		name   string
		status corev1.PodStatus
		pdbs   []*policyv1.PodDisruptionBudget
		// staleGeneration leaves the budget's observedGeneration behind.
		staleGeneration bool
		dryRun          bool
		code            int32  // 0: evicted
		message, cause  string // prefixes
		// wantAllowed is the budget's disruptionsAllowed afterwards.
		wantAllowed int32
		recorded    bool // the pod is in the budget's disruptedPods
	}{
		{name: "no budget", status: ready},
		{name: "budget allows one", status: ready, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 1, 2, 1)}, wantAllowed: 0, recorded: true},
		{name: "budget allows none", status: ready, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 0, 1, 1)},
			code: http.StatusTooManyRequests, message: violates, cause: "The disruption budget web needs 1 healthy pods and has 1 currently"},
		{name: "budget not observed yet", status: ready, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 1, 2, 1)}, staleGeneration: true,
			code: http.StatusTooManyRequests, message: violates, cause: "The disruption budget web is still being processed by the server.", wantAllowed: 1},
		// kube-apiserver's create handler writes the Status the eviction
		// storage returns with 201, so client-go's Error() sees none; the
		// body says Failure with code 500.
		{name: "two budgets", status: ready, pdbs: []*policyv1.PodDisruptionBudget{budget("a", 1, 2, 1), budget("b", 1, 2, 1)},
			code: http.StatusInternalServerError, message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.", wantAllowed: 1},
		{name: "succeeded pod ignores budgets", status: corev1.PodStatus{Phase: corev1.PodSucceeded}, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 0, 1, 1)}},
		{name: "pending pod ignores budgets", status: corev1.PodStatus{Phase: corev1.PodPending}, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 0, 1, 1)}},
		{name: "unready pod with a healthy budget", status: unready, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 0, 2, 2)}, wantAllowed: 0},
		{name: "unready pod with a budget short", status: unready, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 0, 1, 2)},
			code: http.StatusTooManyRequests, message: violates, cause: "The disruption budget web needs 2 healthy pods and has 1 currently"},
		{name: "unready pod with AlwaysAllow", status: unready, pdbs: func() []*policyv1.PodDisruptionBudget {
			b := budget("web", 0, 1, 2)
			b.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
			return []*policyv1.PodDisruptionBudget{b}
		}()},
		{name: "dry run", status: ready, pdbs: []*policyv1.PodDisruptionBudget{budget("web", 1, 2, 1)}, dryRun: true, wantAllowed: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := newNamespace(t, ts.client)
			pods := ts.client.CoreV1().Pods(ns)
			pdbs := ts.client.PolicyV1().PodDisruptionBudgets(ns)
			p, err := pods.Create(ctx, pod("p"), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Status = tc.status
			if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, b := range tc.pdbs {
				created, err := pdbs.Create(ctx, b, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				created.Status = b.Status
				if !tc.staleGeneration {
					created.Status.ObservedGeneration = created.Generation
				}
				if _, err := pdbs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}
			if tc.dryRun {
				ev.DeleteOptions = &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
			}
			// No retries: client-go waits out a 429's Retry-After (10s for
			// a budget still being processed) up to ten times.
			var httpCode int
			res := ts.client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("p").SubResource("eviction").
				MaxRetries(0).Body(ev).Do(ctx).StatusCode(&httpCode)
			err = res.Error()
			code, msg := apiStatusOf(err)
			if len(tc.pdbs) > 1 {
				body, _ := res.Raw()
				var st metav1.Status
				if err != nil || httpCode != http.StatusCreated || json.Unmarshal(body, &st) != nil || st.Status != metav1.StatusFailure {
					t.Fatalf("eviction: %d %s %v, want 201 and a Failure Status", httpCode, body, err)
				}
				code, msg = st.Code, st.Message
			}
			if code != tc.code || !strings.HasPrefix(msg, tc.message) || (tc.code == 0 && err != nil) {
				t.Fatalf("eviction: %d %q (%v), want %d %q", code, msg, err, tc.code, tc.message)
			}
			if tc.cause != "" {
				var se apierrors.APIStatus
				ok := false
				if se, ok = err.(apierrors.APIStatus); ok && se.Status().Details != nil {
					ok = slices.ContainsFunc(se.Status().Details.Causes, func(c metav1.StatusCause) bool {
						return c.Type == policyv1.DisruptionBudgetCause && c.Message == tc.cause
					})
				}
				if !ok {
					t.Errorf("causes %+v, want %s %q", se.Status().Details, policyv1.DisruptionBudgetCause, tc.cause)
				}
			}
			_, err = pods.Get(ctx, "p", metav1.GetOptions{})
			if evicted := apierrors.IsNotFound(err); evicted != (tc.code == 0 && !tc.dryRun) {
				t.Errorf("pod gone: %v (%v)", evicted, err)
			}
			if len(tc.pdbs) != 1 {
				return
			}
			got, err := pdbs.Get(ctx, tc.pdbs[0].Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.DisruptionsAllowed != tc.wantAllowed {
				t.Errorf("disruptionsAllowed %d, want %d", got.Status.DisruptionsAllowed, tc.wantAllowed)
			}
			if _, ok := got.Status.DisruptedPods["p"]; ok != tc.recorded {
				t.Errorf("disruptedPods %v, want p recorded: %v", got.Status.DisruptedPods, tc.recorded)
			}
		})
	}
}

// TestEvictionRequest: the request itself, checked before any budget.
func TestEvictionRequest(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, pod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := ts.client.CoreV1().RESTClient()
	for _, tc := range []struct {
		name    string
		do      func() error
		code    int32
		message string
	}{
		{"name differs from URL", func() error {
			return raw.Post().Namespace(ns).Resource("pods").Name("p").SubResource("eviction").
				Body(&policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"}, ObjectMeta: metav1.ObjectMeta{Name: "q"}}).Do(ctx).Error()
		}, 400, "name in URL does not match name in Eviction object"},
		{"missing pod", func() error {
			return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "nope", Namespace: ns}})
		}, 404, `pods "nope" not found`},
		{"ignoreStoreReadError", func() error {
			return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
				DeleteOptions: &metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)}})
		}, 422, `Eviction.policy "p" is invalid: deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: can not be set for pod eviction, try after removing the option`},
		// A resourceVersion precondition is not retried (a UID one is,
		// for up to 10s, as upstream's EvictionsRetry).
		{"resourceVersion precondition", func() error {
			return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
				DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}}})
		}, 409, `Operation cannot be fulfilled on Pod "p": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record`},
		{"get", func() error {
			return raw.Get().Namespace(ns).Resource("pods").Name("p").SubResource("eviction").Do(ctx).Error()
		}, 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := apiStatusOf(tc.do())
			if code != tc.code || !strings.HasPrefix(msg, tc.message) {
				t.Errorf("got %d %q, want %d %q", code, msg, tc.code, tc.message)
			}
		})
	}
	if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Errorf("the refused evictions deleted the pod: %v", err)
	}
}

// TestPodSubresourcesDiscovery: the pods subresources the pod kind serves
// (internal/registry/core/pod) are in discovery with the kinds and verbs
// kube-apiserver lists; kubectl drain looks for pods/eviction there, and
// its group and version choose the Eviction it sends.
func TestPodSubresourcesDiscovery(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	list, err := ts.client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		got[r.Name] = r
	}
	for _, want := range []metav1.APIResource{
		{Name: "pods/binding", Kind: "Binding", Verbs: []string{"create"}},
		{Name: "pods/eviction", Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}},
		{Name: "pods/exec", Kind: "PodExecOptions", Verbs: []string{"create", "get"}},
		{Name: "pods/attach", Kind: "PodAttachOptions", Verbs: []string{"create", "get"}},
		{Name: "pods/log", Kind: "Pod", Verbs: []string{"get"}},
		{Name: "pods/status", Kind: "Pod", Verbs: []string{"get", "patch", "update"}},
	} {
		g := got[want.Name]
		if !g.Namespaced || g.Group != want.Group || g.Version != want.Version || g.Kind != want.Kind || !slices.Equal(g.Verbs, want.Verbs) {
			t.Errorf("%s = %+v, want %+v", want.Name, g, want)
		}
	}
}

// TestEvictionOfAPodOnANode: the evicted pod gets the DisruptionTarget
// condition, then the ordinary delete marks it with its grace period (the
// node's kubelet, here the agent, finishes it), as upstream.
func TestEvictionOfAPodOnANode(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)
	p := boundPod(t, ts, ns, "p", ptr.To[int64](30))
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	got, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 30 {
		t.Errorf("deletionTimestamp %v, grace %v; want a 30s mark", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
	}
	i := slices.IndexFunc(got.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget })
	if i < 0 || got.Status.Conditions[i].Status != corev1.ConditionTrue || got.Status.Conditions[i].Reason != "EvictionByEvictionAPI" ||
		got.Status.Conditions[i].Message != "Eviction API: evicting" {
		t.Errorf("conditions %+v, want DisruptionTarget True EvictionByEvictionAPI", got.Status.Conditions)
	}
}
