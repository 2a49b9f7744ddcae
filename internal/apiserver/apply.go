package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sjson "sigs.k8s.io/json"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

// apply serves a server-side apply patch (application/apply-patch+yaml):
// the body, YAML or JSON, is merged into the live object (an empty one if
// there is none, which creates it) by structured-merge-diff, which records
// the applied fields for the manager and reports conflicts with other
// managers. The result goes through the same admission, validation and
// storage as any other write.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo, fv fieldValidation, dryRun bool) error {
	q := r.URL.Query()
	info.fieldManager = q.Get("fieldManager")
	if info.fieldManager == "" {
		return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "", field.ErrorList{
			field.Required(field.NewPath("fieldManager"), "is required for apply patch")})
	}
	info.applied = true
	force := false
	if v, ok := q["force"]; ok && len(v) > 0 && v[0] != "" {
		b, err := strconv.ParseBool(v[0])
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid value for force: %q", v[0]))
		}
		force = b
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	ab, err := decodeApplyPatch(res, body)
	if err != nil {
		return err
	}
	if err := applyDuplicates(w, fv, ab.duplicates); err != nil {
		return err
	}
	// Before structured-merge-diff, whose cost grows with the square of
	// the body's keys: a body whose result cannot be stored is refused now.
	if err := s.checkApplySize(res, info.Subresource, ab); err != nil {
		return err
	}
	patch := ab.patch
	if res.Namespaced && patch.GetNamespace() == "" {
		// As a create or update fills it in; errors then name the object
		// by its full name.
		patch.SetNamespace(info.Namespace)
	}
	ctx := r.Context()
	// An apply that lost a race with another write (or another create) is
	// merged again into the newer object until the request ends
	// (retryConflict); a resourceVersion in the body stays a precondition.
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !store.RetryConflict(ctx, attempt) {
			return store.Error(&res.Resource, info.Name, ctx.Err())
		}
		var old any
		kv, err := s.storage.Get(ctx, store.Key(&res.Resource, info.Namespace, info.Name))
		if err == nil {
			if old, err = store.Decode(&res.Resource, kv); err != nil {
				return err
			}
		} else if err := store.Error(&res.Resource, info.Name, err); !apierrors.IsNotFound(err) || info.Subresource != "" {
			return err
		}
		obj, err := s.mergeApply(res, info, old, patch, force)
		if err != nil {
			return err
		}
		var out any
		status := http.StatusOK
		if old == nil {
			status = http.StatusCreated
			out, err = s.createObject(ctx, res, info, obj, dryRun)
		} else {
			if rv := patch.GetResourceVersion(); rv != "" && rv != store.Accessor(old).GetResourceVersion() {
				return store.Conflict(res.GroupResource(), info.Name)
			}
			out, err = s.updateFrom(ctx, res, info, obj, old, dryRun)
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return err
		}
		return s.writeObjects(w, r, res, status, out, nil, metav1.ListMeta{})
	}
}

// mergeApply applies patch to old (nil: the object does not exist yet) and
// returns the merged object in the resource's Go type, managedFields set.
func (s *Server) mergeApply(res *Resource, info requestInfo, old any, patch *unstructured.Unstructured, force bool) (any, error) {
	live, err := toUnstructured(res, old)
	if err != nil {
		return nil, err
	}
	merged, err := s.fields.get(res, info.Subresource).Apply(live, patch.DeepCopy(), info.fieldManager, force)
	if err != nil {
		return nil, applyError(err)
	}
	data, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("encoding the applied %s: %w", res.GVK.Kind, err)
	}
	d, err := decodeObject(res, data, strictdecode.JSON)
	if err != nil {
		return nil, err
	}
	m := store.Accessor(d.obj)
	if m.GetName() != info.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), info.Name))
	}
	if err := checkNamespace(res, d.obj, info.Namespace); err != nil {
		return nil, err
	}
	return d.obj, nil
}

// applyBody is a decoded apply body.
type applyBody struct {
	patch *unstructured.Unstructured
	// typed is the body decoded into the resource's Go type, unknown
	// fields dropped, and docBytes the size of the body as JSON: what
	// checkApplySize measures.
	typed      any
	docBytes   int
	duplicates []strictdecode.FieldProblem
}

// decodeApplyPatch reads an apply body (YAML, of which JSON is a subset)
// into an unstructured object, and finds its duplicate keys. Unknown fields
// are left to structured-merge-diff, which rejects them whatever the
// fieldValidation directive, as upstream.
func decodeApplyPatch(res *Resource, body []byte) (applyBody, error) {
	docs, err := strictdecode.SplitFormat(body, strictdecode.YAML)
	if err != nil {
		return applyBody{}, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if len(docs) != 1 {
		return applyBody{}, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: the body holds %d objects, want exactly one", len(docs)))
	}
	var m map[string]any
	if err := sjson.UnmarshalCaseSensitivePreserveInts(docs[0].JSON(), &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("the body is not an object")
		}
		return applyBody{}, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	// The typed decode reports duplicates with their paths and lines; its
	// type errors are structured-merge-diff's to report.
	typed := res.New()
	problems, _ := docs[0].Decode(typed)
	var duplicates []strictdecode.FieldProblem
	for _, p := range problems {
		if p.Type == strictdecode.DuplicateField {
			duplicates = append(duplicates, p)
		}
	}
	return applyBody{patch: &unstructured.Unstructured{Object: m}, typed: typed, docBytes: len(docs[0].JSON()), duplicates: duplicates}, nil
}

// checkApplySize refuses an apply body whose result cannot be decoded or
// stored (appliedSizeFloor), before any merging. It consumes ab.typed.
func (s *Server) checkApplySize(res *Resource, subresource string, ab applyBody) error {
	limit := s.objectLimit()
	floor, err := s.appliedSizeFloor(res, subresource, ab.typed, ab.patch.Object, ab.docBytes, limit.bytes)
	if err != nil {
		return err
	}
	if floor > limit.bytes {
		return errObjectTooLarge("the applied object", floor, limit)
	}
	return nil
}

// applyDuplicates acts on the duplicate keys of an apply body: Strict is a
// 400 (upstream's "error strict decoding YAML" prefix, then dnsplane's path
// and line for each key), Warn one warning each.
func applyDuplicates(w http.ResponseWriter, fv fieldValidation, duplicates []strictdecode.FieldProblem) error {
	if fv == fieldValidationIgnore || len(duplicates) == 0 {
		return nil
	}
	texts := make([]string, len(duplicates))
	for i, p := range duplicates {
		texts[i] = problemText(p, strictdecode.YAML)
	}
	if fv == fieldValidationStrict {
		return apierrors.NewBadRequest("error strict decoding YAML: " + strings.Join(texts, ", "))
	}
	var rec warningRecorder
	for _, t := range texts {
		rec.add(t)
	}
	rec.write(w.Header())
	return nil
}

// applyError maps a field manager error to a Status. An apply body that
// does not fit the schema (an unknown field, a wrong type) is the client's
// error, so 400 BadRequest where upstream answers 500 (kubernetes#122480);
// the message is upstream's.
func applyError(err error) error {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	if strings.HasPrefix(err.Error(), "failed to create typed patch object") {
		return apierrors.NewBadRequest(err.Error())
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error(),
	}}
}
