package pod

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCheckBudget: the refusals of upstream's checkAndDecrement, in its
// order, with its codes, messages and causes; the status values the API's
// validation refuses (a negative disruptionsAllowed) can only be reached
// here.
func TestCheckBudget(t *testing.T) {
	t.Parallel()
	pdb := func(f func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
		p := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2}}
		f(p)
		return p
	}
	failed := func(reason string) func(*policyv1.PodDisruptionBudget) {
		return func(p *policyv1.PodDisruptionBudget) {
			p.Status.DisruptionsAllowed = 0
			p.Status.Conditions = []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: reason, Message: "boom"}}
		}
	}
	for _, tc := range []struct {
		name    string
		pdb     *policyv1.PodDisruptionBudget
		code    int32 // 0: allowed
		message string
		cause   string
		retry   int32
	}{
		{"allowed", pdb(func(*policyv1.PodDisruptionBudget) {}), 0, "", "", 0},
		{"stale", pdb(func(p *policyv1.PodDisruptionBudget) { p.Status.ObservedGeneration = 1 }), http.StatusTooManyRequests,
			violatesBudget, "The disruption budget web is still being processed by the server.", 10},
		{"negative", pdb(func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed = -1 }), http.StatusForbidden,
			`poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative`,
			"The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative", 0},
		{"too many disrupted", pdb(func(p *policyv1.PodDisruptionBudget) {
			p.Status.DisruptedPods = map[string]metav1.Time{}
			for i := range maxDisruptedPods + 1 {
				p.Status.DisruptedPods[fmt.Sprint("p", i)] = metav1.Now()
			}
		}), http.StatusForbidden, `poddisruptionbudget.policy "web" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
			"The disruption budget web does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller", 0},
		{"sync failed", pdb(failed(policyv1.SyncFailedReason)), http.StatusTooManyRequests, violatesBudget,
			"The disruption budget web does not allow evicting pods currently because it failed sync: boom", 0},
		{"needs more healthy", pdb(func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed, p.Status.CurrentHealthy = 0, 2 }),
			http.StatusTooManyRequests, violatesBudget, "The disruption budget web needs 2 healthy pods and has 2 currently", 0},
		{"other condition", pdb(failed("InsufficientPods")), http.StatusTooManyRequests, violatesBudget,
			"The disruption budget web does not allow evicting pods currently (InsufficientPods): boom", 0},
		{"no reason", pdb(func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed = 0 }), http.StatusTooManyRequests, violatesBudget,
			"The disruption budget web does not allow evicting pods currently", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkBudget(tc.pdb)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a status error", err)
			}
			st := se.Status()
			if st.Code != tc.code || st.Message != tc.message || st.Details == nil || len(st.Details.Causes) != 1 ||
				st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause || st.Details.Causes[0].Message != tc.cause || st.Details.RetryAfterSeconds != tc.retry {
				t.Errorf("got %d %q %+v", st.Code, st.Message, st.Details)
			}
		})
	}
}
