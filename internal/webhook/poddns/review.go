package poddns

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"github.com/dnsplane/dnsplane/api"
)

// kindGVKs are the nine kinds that carry a pod spec, as dnsplane's API
// server serves them (api.Resources); their Go types add spec.dnsParams,
// and api.PodSpecs finds each one's pod spec and metadata.
var kindGVKs = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "PodTemplate"},
	{Version: "v1", Kind: "ReplicationController"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
}

// Kinds maps each resource the webhook reviews to api's row for it, whose
// New decodes the request's objects.
func Kinds() map[schema.GroupVersionResource]api.Resource {
	out := make(map[schema.GroupVersionResource]api.Resource, len(kindGVKs))
	for _, gvk := range kindGVKs {
		r, ok := api.Lookup(gvk)
		if !ok {
			// The table above names kinds api serves; a test keeps it so.
			panic(fmt.Sprintf("poddns: api does not serve %s", gvk))
		}
		out[r.GroupVersionResource()] = r
	}
	return out
}

// Reviewer answers admission requests for the kinds of Kinds.
type Reviewer struct {
	Cluster Cluster
	Logger  *slog.Logger
	kinds   map[schema.GroupVersionResource]api.Resource
}

// NewReviewer returns a Reviewer for cluster; logger may be nil.
func NewReviewer(cluster Cluster, logger *slog.Logger) *Reviewer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Reviewer{Cluster: cluster, Logger: logger, kinds: Kinds()}
}

// request is a decoded admission request.
type request struct {
	res      api.Resource
	obj, old any
}

func (r *Reviewer) decode(req *admissionv1.AdmissionRequest) (*request, error) {
	gvr := schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource}
	res, ok := r.kinds[gvr]
	if !ok {
		return nil, fmt.Errorf("resource %s is not reviewed by this webhook", gvr)
	}
	out := &request{res: res}
	var err error
	if out.obj, err = decodeObject(res, req.Object.Raw); err != nil {
		return nil, fmt.Errorf("decoding object: %w", err)
	}
	if len(req.OldObject.Raw) > 0 {
		if out.old, err = decodeObject(res, req.OldObject.Raw); err != nil {
			return nil, fmt.Errorf("decoding oldObject: %w", err)
		}
	}
	return out, nil
}

// decodeObject decodes raw into res's Go type. Not strictly: the sender is
// kube-apiserver, which may know fields dnsplane's types do not, and none
// of them matters here; the patch is made against raw, so they survive.
func decodeObject(res api.Resource, raw []byte) (any, error) {
	obj := res.New()
	if len(raw) == 0 {
		return nil, fmt.Errorf("no object")
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Validate is the validating webhook's answer: the object's pod specs
// checked as dnsplane's API server checks them.
func (r *Reviewer) Validate(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	d, err := r.decode(req)
	if err != nil {
		return errored(req, err)
	}
	if errs := Validate(d.obj, d.old); len(errs) > 0 {
		return invalid(req, d, errs)
	}
	return allowed(req)
}

// Mutate is the mutating webhook's answer: invalid specs are refused as
// Validate refuses them (before the rewrite hides what the user wrote),
// the others rewritten (Rewrite) and returned as a JSONPatch.
func (r *Reviewer) Mutate(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	d, err := r.decode(req)
	if err != nil {
		return errored(req, err)
	}
	// Validation restores specs in place; validate a second decoding.
	check, err := r.decode(req)
	if err != nil {
		return errored(req, err)
	}
	if errs := Validate(check.obj, check.old); len(errs) > 0 {
		return invalid(req, d, errs)
	}
	var olds []api.PodSpecAt
	if d.old != nil {
		olds = api.PodSpecs(d.old)
	}
	var (
		changed  []api.PodSpecAt
		warnings []string
		errs     field.ErrorList
	)
	for i, at := range api.PodSpecs(d.obj) {
		var prev *api.PodSpecAt
		if i < len(olds) && olds[i].Path.String() == at.Path.String() {
			prev = &olds[i]
		}
		policy, _ := Requested(at)
		res, err := Rewrite(at, prev, req.Namespace, r.Cluster)
		if err != nil {
			errs = append(errs, field.Invalid(at.Path.Child("dnsPolicy"), policy, err.Error()))
			continue
		}
		warnings = append(warnings, res.Warnings...)
		if res.Changed {
			changed = append(changed, at)
		}
	}
	if len(errs) > 0 {
		return invalid(req, d, errs)
	}
	resp := allowed(req)
	resp.Warnings = warnings
	if len(changed) == 0 {
		return resp
	}
	patch, err := patchFor(req.Object.Raw, changed)
	if err != nil {
		return errored(req, err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = patch, &pt
	r.Logger.LogAttrs(ctx, slog.LevelDebug, "rewrote pod DNS",
		slog.String("resource", req.Resource.Resource), slog.String("namespace", req.Namespace),
		slog.String("name", objectName(req, d)), slog.Int("specs", len(changed)))
	return resp
}

// patchFor is the JSONPatch from raw to raw with the changed specs' DNS
// fields and annotations replaced. It edits raw's own JSON tree rather than
// re-encoding the typed object, so fields dnsplane's types do not know (a
// newer kube-apiserver's) and defaults the encoding would add never show up
// in the patch.
func patchFor(raw []byte, changed []api.PodSpecAt) ([]byte, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding object: %w", err)
	}
	for _, at := range changed {
		spec := walk(doc, at.Path.String())
		spec["dnsPolicy"] = string(at.Spec.DNSPolicy)
		if at.Spec.DNSConfig == nil {
			delete(spec, "dnsConfig")
		} else {
			v, err := toJSONValue(at.Spec.DNSConfig)
			if err != nil {
				return nil, err
			}
			spec["dnsConfig"] = v
		}
		meta := walk(doc, at.MetaPath.String())
		if len(at.Meta.Annotations) == 0 {
			delete(meta, "annotations")
		} else {
			meta["annotations"] = at.Meta.Annotations
		}
	}
	mutated, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding object: %w", err)
	}
	ops, err := jsonpatch.CreatePatch(raw, mutated)
	if err != nil {
		return nil, fmt.Errorf("computing patch: %w", err)
	}
	return json.Marshal(ops)
}

// walk returns the object at the dotted path (api.PodSpecs paths have no
// indices), creating missing levels.
func walk(doc map[string]any, path string) map[string]any {
	cur := doc
	for _, k := range strings.Split(path, ".") {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return cur
}

func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func allowed(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
}

// invalid refuses as kube-apiserver's own validation would (422 with one
// cause per field); kube-apiserver shows it to the client prefixed with
// `admission webhook "<name>" denied the request:`.
func invalid(req *admissionv1.AdmissionRequest, d *request, errs field.ErrorList) *admissionv1.AdmissionResponse {
	st := apierrors.NewInvalid(d.res.GVK.GroupKind(), objectName(req, d), errs).Status()
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: false, Result: &st}
}

// errored refuses a request the webhook could not read (400), as
// controller-runtime's webhooks do.
func errored(req *admissionv1.AdmissionRequest, err error) *admissionv1.AdmissionResponse {
	st := apierrors.NewBadRequest(err.Error()).Status()
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: false, Result: &st}
}

func objectName(req *admissionv1.AdmissionRequest, d *request) string {
	if req.Name != "" {
		return req.Name
	}
	if m, ok := d.obj.(metav1.Object); ok {
		if m.GetName() != "" {
			return m.GetName()
		}
		return m.GetGenerateName()
	}
	return ""
}
