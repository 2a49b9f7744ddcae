package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

const (
	mediaJSONPatch      = "application/json-patch+json"
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaApplyPatch     = "application/apply-patch+yaml"
)

// patchRetries bounds retries of a patch that lost a race with another
// write; the patch is re-applied to the newer object each time.
const patchRetries = 5

// builtin reports whether a resource is a Kubernetes built-in kind, the only
// kinds strategic merge patch applies to (their Go types carry the patch
// strategies); dnsplane's own kinds behave like custom resources.
func builtin(res *Resource) bool { return res.GVK.Group != "operator.dnsplane.io" }

func (s *Server) patch(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	dryRun, err := isDryRun(r)
	if err != nil {
		return err
	}
	kind := mediaType(r)
	switch {
	case kind == mediaJSONPatch || kind == mediaMergePatch:
	case kind == mediaStrategicPatch && builtin(res):
	default:
		accepted := []string{mediaJSONPatch, mediaMergePatch}
		if builtin(res) {
			accepted = append(accepted, mediaStrategicPatch)
		}
		return errUnsupportedMediaType(accepted...)
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	for attempt := 0; ; attempt++ {
		kv, err := s.store.Get(ctx, storageKey(res, info.Namespace, info.Name))
		if err != nil {
			return storageError(res, info.Name, err)
		}
		old, err := decodeStored(res, kv)
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
		d, err := decodeObject(res, patched, strictdecode.JSON)
		if err != nil {
			return err
		}
		m := accessor(d.obj)
		if m.GetName() != info.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), info.Name))
		}
		if err := checkNamespace(res, d.obj, info.Namespace); err != nil {
			return err
		}
		// A patch that sets resourceVersion is a precondition: no retry.
		precondition := m.GetResourceVersion() != accessor(old).GetResourceVersion()
		if precondition {
			return errConflict(res.GroupResource(), info.Name)
		}
		updated, err := s.updateFrom(ctx, res, info, d.obj, old, dryRun)
		if apierrors.IsConflict(err) && attempt < patchRetries {
			continue
		}
		if err != nil {
			return err
		}
		return s.writeObjects(w, r, res, http.StatusOK, updated, nil, metav1.ListMeta{})
	}
}

// applyPatch applies a patch document of the given media type to current.
func applyPatch(kind string, current, patch []byte, res *Resource) ([]byte, error) {
	switch kind {
	case mediaJSONPatch:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := p.Apply(current)
		if err != nil {
			return nil, patchFailed(err)
		}
		return out, nil
	case mediaMergePatch:
		if !json.Valid(patch) {
			return nil, apierrors.NewBadRequest("error decoding patch: invalid JSON")
		}
		out, err := jsonpatch.MergePatch(current, patch)
		if err != nil {
			return nil, patchFailed(err)
		}
		return out, nil
	default:
		var probe map[string]any
		if err := json.Unmarshal(patch, &probe); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		out, err := strategicpatch.StrategicMergePatch(current, patch, res.New())
		if err != nil {
			return nil, patchFailed(err)
		}
		return out, nil
	}
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
