package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

// scaleShape is the shape a Scale body decodes with, from sub, the scale
// subresource's declaration (rest.Scale): autoscaling/v1 Scale, whatever
// the parent's group (upstream serves every scale subresource with it;
// pkg/registry/apps/deployment/storage ScaleREST).
func scaleShape(sub rest.Subresource) *Resource {
	return &Resource{Resource: api.Resource{GVK: sub.Kind, Plural: sub.Name, Namespaced: true, New: sub.New}}
}

// scalePatchTypes are the patch types a scale subresource takes, as the
// OpenAPI documents list them (documentResources).
var scalePatchTypes = []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch}

// scale serves …/NAME/scale: get, update and patch of the parent's
// spec.replicas through an autoscaling/v1 Scale.
func (s *Server) scale(w http.ResponseWriter, r *http.Request, res *Resource, sub rest.Subresource, info requestInfo) error {
	switch info.Verb {
	case "get":
		kv, err := s.storage.Get(r.Context(), store.Key(&res.Resource, info.Namespace, info.Name))
		if err != nil {
			return store.Error(&res.Resource, info.Name, err)
		}
		obj, err := store.Decode(&res.Resource, kv)
		if err != nil {
			return err
		}
		sc, err := scaleOf(res, obj)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, sc)
		return nil
	case "update", "patch":
		return s.updateScale(w, r, res, sub, info)
	}
	return errMethodNotAllowed(r.Method, schema.GroupResource{Group: res.GVK.Group, Resource: res.Plural + "/" + sub.Name})
}

// updateScale reads the parent, builds its Scale, applies the request (a
// whole Scale or a patch of it), checks it as upstream's ValidateScale and
// scaleUpdatedObjectInfo do, and stores the parent with the new
// spec.replicas through the parent's own update path (its strategy and
// validation run), retrying when another write won and the request named
// no resourceVersion.
func (s *Server) updateScale(w http.ResponseWriter, r *http.Request, res *Resource, sub rest.Subresource, info requestInfo) error {
	scaleResource := scaleShape(sub)
	dryRun, err := isDryRun(r)
	if err != nil {
		return err
	}
	var (
		sent  *autoscalingv1.Scale // PUT: the Scale sent
		kind  string               // PATCH: the patch's media type
		patch []byte
	)
	if info.Verb == "update" {
		obj, dr, err := s.readObject(w, r, scaleResource, "UpdateOptions")
		if err != nil {
			return err
		}
		dryRun = dr
		if err := checkNamespace(scaleResource, obj, info.Namespace); err != nil {
			return err
		}
		sent = obj.(*autoscalingv1.Scale)
	} else {
		kind = mediaType(r)
		if !slices.Contains(scalePatchTypes, kind) {
			return errUnsupportedMediaType(scalePatchTypes...)
		}
		if patch, err = readBody(r); err != nil {
			return err
		}
	}
	info.fieldManager = managerName(r)
	ctx := r.Context()
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !store.RetryConflict(ctx, attempt) {
			return store.Error(&res.Resource, info.Name, ctx.Err())
		}
		kv, err := s.storage.Get(ctx, store.Key(&res.Resource, info.Namespace, info.Name))
		if err != nil {
			return store.Error(&res.Resource, info.Name, err)
		}
		old, err := store.Decode(&res.Resource, kv)
		if err != nil {
			return err
		}
		oldScale, err := scaleOf(res, old)
		if err != nil {
			return err
		}
		next := sent
		if next == nil {
			if next, err = patchScale(scaleResource, kind, oldScale, patch); err != nil {
				return err
			}
		}
		if next.Name != info.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", next.Name, info.Name))
		}
		if next.Spec.Replicas < 0 {
			return apierrors.NewInvalid(scaleResource.GVK.GroupKind(), info.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), next.Spec.Replicas, "must be greater than or equal to 0")})
		}
		if next.UID != "" && next.UID != store.Accessor(old).GetUID() {
			//nolint:staticcheck // upstream's exact text, capital included
			return apierrors.NewConflict(schema.GroupResource{Group: res.GVK.Group, Resource: res.Plural + "/" + sub.Name}, info.Name,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", next.UID, store.Accessor(old).GetUID()))
		}
		if rv := next.ResourceVersion; rv != "" && rv != store.Accessor(old).GetResourceVersion() {
			return store.Conflict(res.GroupResource(), info.Name)
		}
		obj := store.Clone(old)
		setReplicas(obj, next.Spec.Replicas)
		updated, err := s.updateFrom(ctx, res, info, obj, old, dryRun)
		if apierrors.IsConflict(err) && next.ResourceVersion == "" {
			continue
		}
		if err != nil {
			return err
		}
		sc, err := scaleOf(res, updated)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, sc)
		return nil
	}
}

// patchScale applies a JSON, merge or strategic merge patch to a Scale.
func patchScale(scaleResource *Resource, kind string, current *autoscalingv1.Scale, patch []byte) (*autoscalingv1.Scale, error) {
	data, err := json.Marshal(current)
	if err != nil {
		return nil, fmt.Errorf("encoding the Scale to patch: %w", err)
	}
	patched, err := applyPatch(kind, data, patch, scaleResource)
	if err != nil {
		return nil, err
	}
	d, err := decodeObject(scaleResource, patched, strictdecode.JSON)
	if err != nil {
		return nil, err
	}
	return d.obj.(*autoscalingv1.Scale), nil
}

// scaleOf builds the Scale of a parent object as upstream's
// scaleFromDeployment (and its ReplicaSet, StatefulSet and
// ReplicationController twins) do: spec.replicas (1 when unset, upstream's
// default), status.replicas, and the selector as a string. The fields are
// found by name, as every scalable kind names them alike; a
// ReplicationController's selector is a map, the others' a LabelSelector.
func scaleOf(res *Resource, obj any) (*autoscalingv1.Scale, error) {
	m := store.Accessor(obj)
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: autoscalingv1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
		Spec: autoscalingv1.ScaleSpec{Replicas: 1},
	}
	v := reflect.ValueOf(obj).Elem()
	spec, status := v.FieldByName("Spec"), v.FieldByName("Status")
	if !spec.IsValid() || !status.IsValid() {
		return nil, fmt.Errorf("%s has no spec and status to scale", res.GVK.Kind)
	}
	if r, ok := spec.FieldByName("Replicas").Interface().(*int32); ok && r != nil {
		sc.Spec.Replicas = *r
	}
	if r, ok := status.FieldByName("Replicas").Interface().(int32); ok {
		sc.Status.Replicas = r
	}
	switch sel := spec.FieldByName("Selector").Interface().(type) {
	case map[string]string:
		sc.Status.Selector = labels.SelectorFromSet(sel).String()
	case *metav1.LabelSelector:
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		sc.Status.Selector = s.String()
	}
	return sc, nil
}

// setReplicas sets spec.replicas of a scalable object.
func setReplicas(obj any, n int32) {
	f := reflect.ValueOf(obj).Elem().FieldByName("Spec").FieldByName("Replicas")
	if f.IsValid() && f.CanSet() {
		f.Set(reflect.ValueOf(&n))
	}
}
