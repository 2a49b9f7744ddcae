package pod

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
	v1podutil "k8s.io/kubernetes/pkg/api/v1/pod"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// pods/eviction: a delete that a PodDisruptionBudget may refuse, with the
// semantics and messages of kube-apiserver's EvictionREST
// (k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go), which
// `kubectl drain` and the node lifecycle controllers rely on.
// docs/apiserver.md, "Subresources".

var (
	pdbResource     = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	evictionKind    = schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}
	pdbErrorsAsKube = schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}
)

const (
	// maxDisruptedPods is upstream's MaxDisruptedPodSize: with more
	// evictions than this not yet seen by the disruption controller, a
	// PDB's pods are not evicted.
	maxDisruptedPods = 2000
	// violatesBudget is the 429's message.
	violatesBudget = "Cannot evict pod as it would violate the pod's disruption budget."
)

// evictionRetry is upstream's EvictionsRetry: evictions of one PDB's pods
// race for its status, and each conflict is retried for up to ~10s.
var evictionRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// eviction is pods/eviction.
func eviction(now func() time.Time) rest.Subresource {
	return rest.Subresource{
		Name:     "eviction",
		Kind:     evictionKind,
		Verbs:    []string{"create"},
		New:      func() any { return &policyv1.Eviction{} },
		Document: rest.DocumentCreate,
		Serve: func(ctx context.Context, objs rest.Objects, req rest.Request) (rest.Response, error) {
			st, err := evict(ctx, objs, req.Name, req.Body.(*policyv1.Eviction), req.DryRun, now)
			if err != nil {
				return rest.Response{}, err
			}
			st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
			if st.Code == 0 {
				st.Code = http.StatusCreated
			}
			// A refused eviction with more than one PDB is still a 201
			// whose Status says Failure, as kube-apiserver's create
			// handler writes whatever Status the storage returns; clients
			// read the Status.
			return rest.Response{Code: http.StatusCreated, Object: st}, nil
		},
	}
}

// evict evicts the pod name, or says why not.
func evict(ctx context.Context, objs rest.Objects, name string, ev *policyv1.Eviction, dryRun bool, now func() time.Time) (*metav1.Status, error) {
	if name != ev.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if ev.DeleteOptions != nil && ev.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *ev.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return nil, apierrors.NewInvalid(evictionKind.GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("deleteOptions").Child("ignoreStoreReadErrorWithClusterBreakingPotential"), true, "can not be set for pod eviction, try after removing the option")})
	}
	opts, err := evictionDeleteOptions(ev, dryRun)
	if err != nil {
		return nil, err
	}
	orig := opts
	ns := ev.Namespace
	retryConflicts := apierrors.IsConflict
	if rvPreconditionSet(opts) {
		// The client's own resourceVersion is a precondition it set:
		// a conflict is its answer, not ours to retry.
		retryConflicts = func(error) bool { return false }
	}

	// A pod that is not running (or already going) is deleted without a
	// look at its budgets: its disruption has happened.
	var pod *dpcorev1.Pod
	deleted := false
	err = retry.OnError(evictionRetry, retryConflicts, func() error {
		obj, err := objs.Get(ctx, Resource, ns, name)
		if err != nil {
			return err
		}
		pod = obj.(*dpcorev1.Pod)
		if !mayIgnoreBudgets(pod) {
			return nil
		}
		o := opts
		if !terminal(pod) && !rvPreconditionSet(opts) {
			// A Pending pod may become ready before the delete: the
			// delete must be of the pod as read.
			o = withRVPrecondition(opts, pod.ResourceVersion)
		}
		if err := markAndDelete(ctx, objs, ns, name, o, now); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if deleted {
		return &metav1.Status{Status: metav1.StatusSuccess}, nil
	}

	pdbs, err := budgetsOf(ctx, objs, pod)
	if err != nil {
		return nil, err
	}
	if len(pdbs) > 1 {
		return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}, nil
	}
	pinned := false // the delete must be of the pod as read
	if len(pdbs) == 1 {
		pdb := pdbs[0]
		unhealthy := !v1podutil.IsPodReadyConditionTrue(pod.Status)
		switch {
		case unhealthy && pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow:
			// An unready pod counts for nothing in the budget, which
			// stays as it is.
			pinned = true
		case unhealthy && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0:
			// IfHealthyBudget (the default): the application is not
			// disrupted now, and deleting an unready pod does not
			// disrupt it.
			pinned = true
		default:
			if err := decrementBudget(ctx, objs, pod, pdb, opts, now); err != nil {
				return nil, err
			}
		}
		if pinned {
			opts = withRVPrecondition(opts, pod.ResourceVersion)
		}
		if err := markAndDelete(ctx, objs, ns, name, opts, now); err != nil {
			if apierrors.IsConflict(err) && pinned && !rvPreconditionSet(orig) {
				// The pod changed (it may be ready now): the client
				// should ask again.
				return nil, stillProcessing(pdb.Name)
			}
			return nil, err
		}
		return &metav1.Status{Status: metav1.StatusSuccess}, nil
	}
	if err := markAndDelete(ctx, objs, ns, name, opts, now); err != nil {
		return nil, err
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, nil
}

// evictionDeleteOptions are the Eviction's deleteOptions with the request's
// dryRun, which must agree with the body's (upstream's propagateDryRun).
func evictionDeleteOptions(ev *policyv1.Eviction, dryRun bool) (*metav1.DeleteOptions, error) {
	var requested []string
	if dryRun {
		requested = []string{metav1.DryRunAll}
	}
	if ev.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: requested}, nil
	}
	opts := ev.DeleteOptions.DeepCopy()
	switch {
	case len(opts.DryRun) == 0:
		opts.DryRun = requested
	case len(requested) != 0 && !reflect.DeepEqual(requested, opts.DryRun):
		// A plain error, which upstream's handler answers with a 500.
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", requested, opts.DryRun) //nolint:staticcheck // upstream's text
	}
	return opts, nil
}

func isDryRun(opts *metav1.DeleteOptions) bool { return len(opts.DryRun) > 0 }

func rvPreconditionSet(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil
}

func withRVPrecondition(opts *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	o := opts.DeepCopy()
	if o.Preconditions == nil {
		o.Preconditions = &metav1.Preconditions{}
	}
	o.Preconditions.ResourceVersion = &rv
	return o
}

// terminal: the pod's phase is final or it is being deleted.
func terminal(p *dpcorev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil
}

// mayIgnoreBudgets is upstream's canIgnorePDB: terminal, or not running
// yet.
func mayIgnoreBudgets(p *dpcorev1.Pod) bool {
	return terminal(p) || p.Status.Phase == corev1.PodPending
}

// budgetsOf lists the PDBs of the pod's namespace whose selector matches
// it; a PDB with an invalid selector matches nothing.
func budgetsOf(ctx context.Context, objs rest.Objects, pod *dpcorev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	all, err := objs.List(ctx, pdbResource, pod.Namespace)
	if err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for _, obj := range all {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || pdb.Namespace != pod.Namespace || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// decrementBudget takes one disruption from pdb for the pod and records it
// in status.disruptedPods, so the disruption controller does not count
// the pod as available; a conflict reads the PDB again and checks anew.
func decrementBudget(ctx context.Context, objs rest.Objects, pod *dpcorev1.Pod, pdb *policyv1.PodDisruptionBudget, opts *metav1.DeleteOptions, now func() time.Time) error {
	refresh := false
	err := retry.RetryOnConflict(evictionRetry, func() error {
		if refresh {
			obj, err := objs.Get(ctx, pdbResource, pdb.Namespace, pdb.Name)
			if err != nil {
				return err
			}
			pdb = obj.(*policyv1.PodDisruptionBudget)
		}
		refresh = true
		if err := checkBudget(pdb); err != nil {
			return err
		}
		next := pdb.DeepCopy()
		next.Status.DisruptionsAllowed--
		if next.Status.DisruptionsAllowed == 0 {
			pdbhelper.UpdateDisruptionAllowedCondition(next)
		}
		if isDryRun(opts) {
			return nil
		}
		if next.Status.DisruptedPods == nil {
			next.Status.DisruptedPods = map[string]metav1.Time{}
		}
		next.Status.DisruptedPods[pod.Name] = metav1.NewTime(now())
		_, err := objs.UpdateStatus(ctx, pdbResource, next, false)
		return err
	})
	if wait.Interrupted(err) {
		return apierrors.NewTimeoutError(fmt.Sprintf("couldn't update PodDisruptionBudget %q due to conflicts", pdb.Name), 10)
	}
	return err
}

// checkBudget is upstream's checkAndDecrement's refusals, in its order and
// words.
func checkBudget(pdb *policyv1.PodDisruptionBudget) error {
	refuse := func(err *apierrors.StatusError, msg string) error {
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: msg})
		return err
	}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return stillProcessing(pdb.Name)
	case pdb.Status.DisruptionsAllowed < 0:
		return refuse(apierrors.NewForbidden(pdbErrorsAsKube, pdb.Name, errors.New("pdb disruptions allowed is negative")),
			fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: pdb disruptions allowed is negative", pdb.Name))
	case len(pdb.Status.DisruptedPods) > maxDisruptedPods:
		return refuse(apierrors.NewForbidden(pdbErrorsAsKube, pdb.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller")),
			fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller", pdb.Name))
	case pdb.Status.DisruptionsAllowed == 0:
		cond := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
		failed := cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != ""
		var msg string
		switch {
		case failed && cond.Reason == policyv1.SyncFailedReason:
			// Checked first: the healthy counts mean nothing when the
			// controller could not compute them.
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
		case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
			msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
		case failed:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
		default:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
		}
		return refuse(apierrors.NewTooManyRequests(violatesBudget, 0), msg)
	}
	return nil
}

// stillProcessing is the 429 for a budget the disruption controller has not
// caught up with (or a pod that changed under the check): retry in 10s.
func stillProcessing(pdbName string) error {
	err := apierrors.NewTooManyRequests(violatesBudget, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName)})
	return err
}

// markAndDelete sets the pod's DisruptionTarget condition (reason
// EvictionByEvictionAPI), so its controllers see why it goes, then deletes
// it with opts. A dry run only checks the delete.
func markAndDelete(ctx context.Context, objs rest.Objects, ns, name string, opts *metav1.DeleteOptions, now func() time.Time) error {
	if !isDryRun(opts) {
		updated, err := objs.GuaranteedUpdate(ctx, Resource, ns, name, false, func(obj any) error {
			p := obj.(*dpcorev1.Pod)
			if err := checkEvictionPreconditions(p, opts.Preconditions); err != nil {
				return err
			}
			setCondition(&p.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}, now())
			return nil
		})
		if err != nil {
			return err
		}
		if rvPreconditionSet(opts) {
			// Our own write moved the resourceVersion.
			opts = withRVPrecondition(opts, updated.(*dpcorev1.Pod).ResourceVersion)
		}
	}
	_, err := objs.Delete(ctx, Resource, ns, name, opts, isDryRun(opts))
	return err
}

// checkEvictionPreconditions are the delete's preconditions checked before
// the condition is written, in upstream's words (whose resource is "Pod").
func checkEvictionPreconditions(p *dpcorev1.Pod, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	gr := schema.GroupResource{Resource: "Pod"}
	if uid := pre.UID; uid != nil && *uid != "" && *uid != p.UID {
		return apierrors.NewConflict(gr, p.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *uid, p.UID))
	}
	if rv := pre.ResourceVersion; rv != nil && *rv != "" && *rv != p.ResourceVersion {
		return apierrors.NewConflict(gr, p.Name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *rv, p.ResourceVersion))
	}
	return nil
}
