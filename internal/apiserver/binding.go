package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// bindingResource is the shape a Binding body decodes with: core/v1
// Binding, a built-in kind (JSON, YAML or protobuf, as the scheduler's
// typed client sends it).
var bindingResource = &Resource{Resource: api.Resource{
	GVK:    schema.GroupVersionKind{Version: "v1", Kind: "Binding"},
	Plural: "bindings", Namespaced: true,
	New: func() any { return &corev1.Binding{} },
}}

// binding answers POST …/pods/NAME/binding: the scheduler assigns the pod
// to a node (upstream's BindingREST.Create, pkg/registry/core/pod/storage/
// storage.go).
func (s *Server) binding(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	if info.Verb != "create" {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Resource: "pods/binding"})
	}
	b, dryRun, err := s.readBinding(w, r, info.Namespace)
	if err != nil {
		return err
	}
	if b.Name != info.Name {
		return apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	return s.bind(r.Context(), w, res, b, dryRun)
}

// legacyBinding answers POST /api/v1/namespaces/NS/bindings, the older
// form that names the pod in the body (upstream's LegacyBindingREST).
func (s *Server) legacyBinding(w http.ResponseWriter, r *http.Request, info requestInfo) error {
	if info.GV.Version != "v1" || info.Name != "" || info.Namespace == "" {
		return errNotFoundPath()
	}
	if info.Verb != "create" {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Resource: "bindings"})
	}
	b, dryRun, err := s.readBinding(w, r, info.Namespace)
	if err != nil {
		return err
	}
	pods, _ := s.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	return s.bind(r.Context(), w, pods, b, dryRun)
}

// readBinding decodes and validates a Binding body (upstream's
// ValidatePodBinding, pkg/apis/core/validation/validation.go).
func (s *Server) readBinding(w http.ResponseWriter, r *http.Request, namespace string) (*corev1.Binding, bool, error) {
	obj, dryRun, err := s.readObject(w, r, bindingResource, "CreateOptions")
	if err != nil {
		return nil, false, err
	}
	if err := checkNamespace(bindingResource, obj, namespace); err != nil {
		return nil, false, err
	}
	b := obj.(*corev1.Binding)
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
		return nil, false, apierrors.NewBadRequest(errs.ToAggregate().Error())
	}
	return b, dryRun, nil
}

// bind sets the pod's spec.nodeName and its PodScheduled condition in one
// compare-and-swap, read again when another write won, and answers 201 with
// a Success Status as upstream.
func (s *Server) bind(ctx context.Context, w http.ResponseWriter, pods *Resource, b *corev1.Binding, dryRun bool) error {
	key := storageKey(pods, b.Namespace, b.Name)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !retryConflict(ctx, attempt) {
			return storageError(pods, b.Name, ctx.Err())
		}
		kv, err := s.store.Get(ctx, key)
		if err != nil {
			return storageError(pods, b.Name, err)
		}
		obj, err := decodeStored(pods, kv)
		if err != nil {
			return err
		}
		pod := obj.(*dpcorev1.Pod)
		if err := checkBindingPreconditions(pods, pod, b); err != nil {
			return err
		}
		if err := assignPod(pod, b, s.now()); err != nil {
			return apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, b.Name, err)
		}
		if !dryRun {
			value, err := encodeForStorage(pods, pod)
			if err != nil {
				return err
			}
			_, err = s.store.Update(ctx, key, value, kv.ModRevision)
			if errors.Is(err, storage.ErrConflict) && b.ResourceVersion == "" {
				continue
			}
			if err != nil {
				return storageError(pods, b.Name, err)
			}
		}
		writeJSON(w, http.StatusCreated, metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusSuccess,
			Code:     http.StatusCreated,
		})
		return nil
	}
}

// checkBindingPreconditions: a Binding's uid and resourceVersion, when set,
// are preconditions on the pod, as upstream's storage words them.
func checkBindingPreconditions(pods *Resource, pod *dpcorev1.Pod, b *corev1.Binding) error {
	if b.UID != "" && b.UID != pod.UID {
		//nolint:staticcheck // upstream's exact text, capital included
		return apierrors.NewConflict(pods.GroupResource(), b.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
	}
	if b.ResourceVersion != "" && b.ResourceVersion != pod.ResourceVersion {
		//nolint:staticcheck // upstream's exact text, capital included
		return apierrors.NewConflict(pods.GroupResource(), b.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", b.ResourceVersion, pod.ResourceVersion))
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
	setPodScheduled(&pod.Status, now)
	return nil
}

// setPodScheduled sets the PodScheduled condition True as upstream's
// UpdatePodCondition (pkg/api/pod/util.go) does: the transition time moves
// only when the status changes.
func setPodScheduled(st *corev1.PodStatus, now time.Time) {
	c := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}
	for i := range st.Conditions {
		if st.Conditions[i].Type != corev1.PodScheduled {
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

// serveSubresource serves the subresources other than status.
func (s *Server) serveSubresource(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	if sub, ok := subresourceUpdate(res, info.Subresource); ok {
		return s.updateSubresource(w, r, sub, info)
	}
	switch info.Subresource {
	case "binding":
		return s.binding(w, r, res, info)
	case "scale":
		return s.scale(w, r, res, info)
	case "exec":
		return s.podExec(w, r, res, info)
	case "attach":
		return s.podAttach(w, r, res, info)
	case "log":
		return s.podLog(w, r, res, info)
	}
	return errNotFoundPath()
}
