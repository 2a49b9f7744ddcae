package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sjson "sigs.k8s.io/json"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

const (
	mediaJSONPatch      = "application/json-patch+json"
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaApplyPatch     = "application/apply-patch+yaml"
)

// builtin reports whether a resource is a Kubernetes built-in kind, the only
// kinds strategic merge patch applies to (their Go types carry the patch
// strategies); dnsplane's own kinds behave like custom resources.
func builtin(res *Resource) bool { return !res.Custom }

func (s *Server) patch(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	dryRun, err := isDryRun(r)
	if err != nil {
		return err
	}
	kind := mediaType(r)
	switch {
	case kind == mediaJSONPatch || kind == mediaMergePatch || kind == mediaApplyPatch:
	case kind == mediaStrategicPatch && builtin(res):
	default:
		accepted := []string{mediaJSONPatch, mediaMergePatch}
		if builtin(res) {
			accepted = append(accepted, mediaStrategicPatch)
		}
		return errUnsupportedMediaType(append(accepted, mediaApplyPatch)...)
	}
	fv, err := s.parseWriteOptions(r, "PatchOptions")
	if err != nil {
		return err
	}
	if kind == mediaApplyPatch {
		return s.apply(w, r, res, info, fv, dryRun)
	}
	if _, ok := r.URL.Query()["force"]; ok {
		return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "", field.ErrorList{
			field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch")})
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var bodyProblems []string
	if fv != fieldValidationIgnore {
		bodyProblems = patchBodyProblems(kind, body)
	}
	info.fieldManager = managerName(r)
	ctx := r.Context()
	// A patch that lost a race with another write is applied again to the
	// newer object until the request ends (retryConflict).
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
		current, err := json.Marshal(old)
		if err != nil {
			return fmt.Errorf("encoding %s for patching: %w", kv.Key, err)
		}
		patched, err := applyPatch(kind, current, body, res)
		if err != nil {
			return err
		}
		// Decoding refuses a document over the limit anyway; say which
		// limit, before spending the decode on it.
		if len(patched) > MaxRequestBodyBytes {
			return errObjectTooLarge("the patched object", len(patched), decodeLimit())
		}
		d, err := decodeObject(res, patched, strictdecode.JSON)
		if err != nil {
			return err
		}
		if err := patchFieldValidation(w, fv, kind, body, patched, bodyProblems, d.problems); err != nil {
			return err
		}
		m := store.Accessor(d.obj)
		if m.GetName() != info.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), info.Name))
		}
		if err := checkNamespace(res, d.obj, info.Namespace); err != nil {
			return err
		}
		// A patch that sets resourceVersion is a precondition: no retry.
		// One that removes it is unconditional, as upstream.
		if rv := m.GetResourceVersion(); rv != "" && rv != store.Accessor(old).GetResourceVersion() {
			return store.Conflict(res.GroupResource(), info.Name)
		}
		// Before managedFields are computed (structured-merge-diff, the
		// expensive step): an object storage cannot take is refused now.
		if limit, ok := s.storageLimit(); ok {
			floor, err := storedSizeFloor(res, info.Subresource, d.obj, len(patched), limit.bytes)
			if err != nil {
				return err
			}
			if floor > limit.bytes {
				return errObjectTooLarge("the patched object", floor, limit)
			}
		}
		updated, err := s.updateFrom(ctx, res, info, d.obj, old, dryRun)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return err
		}
		return s.writeObjects(w, r, res, http.StatusOK, updated, nil, metav1.ListMeta{})
	}
}

// applyPatch applies a patch document of the given media type to current,
// within the limits on the work a patch may cause (patchlimits.go).
func applyPatch(kind string, current, patch []byte, res *Resource) ([]byte, error) {
	switch kind {
	case mediaJSONPatch:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		// Counted before any runs, as upstream.
		if len(p) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p)))
		}
		opts := jsonpatch.NewApplyOptions()
		opts.AccumulatedCopySizeLimit = maxJSONPatchCopyBytes
		out, err := p.ApplyWithOptions(current, opts)
		var copyErr *jsonpatch.AccumulatedCopySizeError
		if errors.As(err, &copyErr) {
			return nil, errJSONPatchFailed(err)
		}
		if err != nil {
			return nil, patchFailed(err)
		}
		return out, nil
	case mediaMergePatch:
		if !json.Valid(patch) {
			return nil, apierrors.NewBadRequest("error decoding patch: invalid JSON")
		}
		return mergePatch(current, patch, res)
	default:
		return strategicMerge(current, patch, res)
	}
}

// mergePatch applies a JSON merge patch (RFC 7386) in time linear in the
// documents. json-patch/v5's MergePatch keeps each object's key order in a
// slice it searches on every insert, so merging n keys into an object
// costs n² (100,000 keys: 23 s). As json-patch, only the objects the patch
// reaches are decoded, nulls in values that are set rather than merged are
// pruned, and a patch that is not an object is the result.
func mergePatch(current, patch []byte, res *Resource) ([]byte, error) {
	var p any
	if err := decodeUseNumber(patch, &p); err != nil {
		return nil, apierrors.NewBadRequest("error decoding patch: invalid JSON")
	}
	pm, ok := p.(map[string]any)
	if !ok {
		return patch, nil
	}
	out, err := mergeInto(current, pm)
	if err != nil {
		return nil, fmt.Errorf("patching the %s: %w", res.GVK.Kind, err)
	}
	return out, nil
}

// mergeInto merges the patch object p into the JSON value target: an
// object's members the patch does not name stay as they were written.
func mergeInto(target json.RawMessage, p map[string]any) (json.RawMessage, error) {
	var t map[string]json.RawMessage
	if err := json.Unmarshal(target, &t); err != nil || t == nil {
		// Not an object: the patch replaces it, as an object of its own.
		t = make(map[string]json.RawMessage, len(p))
	}
	for k, v := range p {
		var err error
		switch pv := v.(type) {
		case nil:
			delete(t, k)
			continue
		case map[string]any:
			if cur := t[k]; len(cur) > 0 && cur[0] == '{' {
				t[k], err = mergeInto(cur, pv)
			} else {
				// Nothing to merge with: encoded once, however deep.
				t[k], err = json.Marshal(pruneNulls(pv))
			}
		default:
			t[k], err = json.Marshal(pruneNulls(v))
		}
		if err != nil {
			return nil, err
		}
	}
	return json.Marshal(t)
}

// pruneNulls drops the null members of the objects in a value that is set
// rather than merged (a list, and the objects in it), as json-patch does.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = pruneNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = pruneNulls(e)
		}
	}
	return v
}

// decodeUseNumber decodes JSON keeping numbers as they were written.
func decodeUseNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// strategicMerge applies a strategic merge patch: both documents are
// decoded once, priced (priceStrategicMerge) and then merged as maps.
func strategicMerge(current, patch []byte, res *Resource) ([]byte, error) {
	var patchMap map[string]any
	if err := sjson.UnmarshalCaseSensitivePreserveInts(patch, &patchMap); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	if patchMap == nil {
		// "null" patches nothing, as for strategicpatch's own decoding.
		patchMap = map[string]any{}
	}
	var currentMap map[string]any
	if err := sjson.UnmarshalCaseSensitivePreserveInts(current, &currentMap); err != nil {
		return nil, fmt.Errorf("decoding the %s to patch: %w", res.GVK.Kind, err)
	}
	schema := res.New()
	meta, err := strategicpatch.NewPatchMetaFromStruct(schema)
	if err != nil {
		return nil, fmt.Errorf("reading the patch strategies of %s: %w", res.GVK.Kind, err)
	}
	if err := priceStrategicMerge(patchMap, currentMap, meta); err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergeMapPatch(currentMap, patchMap, schema)
	if err != nil {
		return nil, patchFailed(err)
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("encoding the patched %s: %w", res.GVK.Kind, err)
	}
	return out, nil
}

// patchFailed is the 422 for a well-formed patch that cannot be applied.
func patchFailed(err error) error {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
		Reason: metav1.StatusReasonInvalid, Message: err.Error(),
	}}
}

// jsonPatchOp is the shape of one JSON patch operation, for finding unknown
// and duplicate keys in the operations themselves.
type jsonPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// patchBodyProblems finds what only the patch body shows: duplicate keys (a
// merged object has none left), and for JSON patch unknown or duplicate keys
// in the operations, prefixed "json patch " as upstream.
func patchBodyProblems(kind string, body []byte) []string {
	var strictErrs []error
	prefix := ""
	if kind == mediaJSONPatch {
		var ops []jsonPatchOp
		strictErrs, _ = sjson.UnmarshalStrict(body, &ops, sjson.DisallowUnknownFields, sjson.DisallowDuplicateFields)
		prefix = "json patch "
	} else {
		var m map[string]any
		strictErrs, _ = sjson.UnmarshalStrict(body, &m, sjson.DisallowDuplicateFields)
	}
	out := make([]string, len(strictErrs))
	for i, e := range strictErrs {
		out[i] = prefix + e.Error()
	}
	return out
}

// patchFieldValidation acts on a patch's unknown and duplicate fields: the
// body's problems first, then the unknown fields of the patched object in
// sorted order (upstream finds them in a map); Strict is kube's 422 with a
// "patch" cause, Warn one Warning header each.
func patchFieldValidation(w http.ResponseWriter, fv fieldValidation, kind string, body, patched []byte, bodyProblems []string, objProblems []strictdecode.FieldProblem) error {
	if fv == fieldValidationIgnore || len(bodyProblems)+len(objProblems) == 0 {
		return nil
	}
	unknown := make([]string, 0, len(objProblems))
	for _, p := range objProblems {
		unknown = append(unknown, p.Error())
	}
	sort.Strings(unknown)
	texts := append(append([]string(nil), bodyProblems...), unknown...)
	if fv == fieldValidationWarn {
		var rec warningRecorder
		for _, t := range texts {
			rec.add(t)
		}
		rec.write(w.Header())
		return nil
	}
	// The value upstream reports: the patched object for JSON and merge
	// patches, a Go dump of the patch map for strategic merge patches.
	value := string(patched)
	if kind == mediaStrategicPatch {
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		value = fmt.Sprintf("%+v", m)
	}
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), value, "strict decoding error: "+strings.Join(dedupe(texts), ", ")),
	})
}

func dedupe(texts []string) []string {
	seen := map[string]bool{}
	out := texts[:0:0]
	for _, t := range texts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
