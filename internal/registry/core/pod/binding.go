package pod

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Resource is the pods resource, as subresources name it to the API
// server's Objects.
var Resource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// bindingResource is how pods/binding errors name the subresource.
var bindingResource = schema.GroupResource{Resource: "pods/binding"}

// binding is pods/binding: the scheduler assigns the pod to a node
// (upstream's BindingREST, pkg/registry/core/pod/storage/storage.go).
func binding(now func() time.Time) rest.Subresource {
	return rest.Subresource{
		Name:     "binding",
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Binding"},
		Verbs:    []string{"create"},
		New:      func() any { return &corev1.Binding{} },
		Document: rest.DocumentCreate,
		// kube-apiserver's older POST …/namespaces/NS/bindings (LegacyBindingREST).
		Alias: "bindings",
		Serve: func(ctx context.Context, objs rest.Objects, req rest.Request) (rest.Response, error) {
			b := req.Body.(*corev1.Binding)
			// No name in the URL: the older POST …/bindings, which names
			// the pod in the body only (upstream's LegacyBindingREST).
			if req.Name != "" && b.Name != req.Name {
				return rest.Response{}, apierrors.NewBadRequest("name in URL does not match name in Binding object")
			}
			return bind(ctx, objs, b, req.DryRun, now())
		},
	}
}

// bind assigns the pod b names to b's node: it validates b as upstream's
// ValidatePodBinding, then sets the pod's spec.nodeName and PodScheduled
// condition in one compare-and-swap, and answers 201 with a Success Status
// as upstream.
func bind(ctx context.Context, objs rest.Objects, b *corev1.Binding, dryRun bool, now time.Time) (rest.Response, error) {
	if err := validateBinding(b); err != nil {
		return rest.Response{}, err
	}
	_, err := objs.GuaranteedUpdate(ctx, Resource, b.Namespace, b.Name, dryRun, func(obj any) error {
		pod := obj.(*dpcorev1.Pod)
		if err := checkBindingPreconditions(pod, b); err != nil {
			return err
		}
		if err := assignPod(pod, b, now); err != nil {
			return apierrors.NewConflict(bindingResource, b.Name, err)
		}
		return nil
	})
	if err != nil {
		return rest.Response{}, err
	}
	return rest.Response{Code: http.StatusCreated, Object: &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Code:     http.StatusCreated,
	}}, nil
}

// validateBinding is upstream's ValidatePodBinding
// (pkg/apis/core/validation/validation.go).
func validateBinding(b *corev1.Binding) error {
	var errs field.ErrorList
	target := field.NewPath("target")
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(target.Child("kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(target.Child("name"), ""))
	} else if b.Target.Kind == "" || b.Target.Kind == "Node" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(b.Target.Name, false) {
			errs = append(errs, field.Invalid(target.Child("name"), b.Target.Name, msg))
		}
	}
	if len(errs) > 0 {
		// Upstream returns the aggregate as a plain error, which its
		// handler turns into a 500; the request is the client's fault, so
		// the same text comes back as a 400.
		return apierrors.NewBadRequest(errs.ToAggregate().Error())
	}
	return nil
}

// checkBindingPreconditions: a Binding's uid and resourceVersion, when set,
// are preconditions on the pod, as upstream's storage words them.
func checkBindingPreconditions(pod *dpcorev1.Pod, b *corev1.Binding) error {
	gr := Resource.GroupResource()
	if b.UID != "" && b.UID != pod.UID {
		//nolint:staticcheck // upstream's exact text, capital included
		return apierrors.NewConflict(gr, b.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
	}
	if b.ResourceVersion != "" && b.ResourceVersion != pod.ResourceVersion {
		//nolint:staticcheck // upstream's exact text, capital included
		return apierrors.NewConflict(gr, b.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", b.ResourceVersion, pod.ResourceVersion))
	}
	return nil
}

// assignPod is upstream's setPodNodeAndMetadata: refuse a pod being
// deleted, already assigned or still gated; otherwise set the node, merge
// the Binding's annotations and mark the pod scheduled.
func assignPod(pod *dpcorev1.Pod, b *corev1.Binding, now time.Time) error {
	switch {
	case pod.DeletionTimestamp != nil:
		return fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
	case pod.Spec.NodeName != "":
		return fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
	case len(pod.Spec.SchedulingGates) != 0:
		return fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
	}
	pod.Spec.NodeName = b.Target.Name
	pod.Status.NominatedNodeName = ""
	if len(b.Annotations) > 0 && pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for k, v := range b.Annotations {
		pod.Annotations[k] = v
	}
	setCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, now)
	return nil
}

// setCondition sets condition c as upstream's UpdatePodCondition
// (pkg/api/pod/util.go) does: the transition time moves only when the
// status changes.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	for i := range st.Conditions {
		if st.Conditions[i].Type != c.Type {
			continue
		}
		if st.Conditions[i].Status == c.Status {
			c.LastTransitionTime = st.Conditions[i].LastTransitionTime
		}
		st.Conditions[i] = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}
