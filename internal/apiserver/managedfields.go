package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/openapi"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// maxFieldManagerLength is upstream's limit on a manager name.
const maxFieldManagerLength = 128

// fieldManagers holds one managedfields.FieldManager per resource and
// subresource. The structured-merge-diff schemas come from the same OpenAPI
// definitions the server publishes, which are generated from the Go types
// the decoder uses, so apply, the schema and strict decoding agree.
type fieldManagers struct {
	byKey map[fieldManagerKey]*managedfields.FieldManager
	// roots are the structured-merge-diff schema of each kind, for
	// appliedSizeFloor's walk over an apply body.
	roots map[schema.GroupVersionKind]typeRoot
}

// typeRoot is a kind's type in the structured-merge-diff schema.
type typeRoot struct {
	schema *smdschema.Schema
	ref    smdschema.TypeRef
}

type fieldManagerKey struct {
	gvk         schema.GroupVersionKind
	subresource string
}

func newFieldManagers(reg *Registry) (*fieldManagers, error) {
	// The kinds' Swagger 2.0 definitions, as /openapi/v2 publishes them
	// (package openapi/document adds the lists and meta types the
	// operations use, which no kind refers to).
	gen := openapi.NewGenerator(openapi.V2)
	for _, res := range reg.Resources() {
		if _, err := gen.AddKind(res.GVK, res.New()); err != nil {
			return nil, fmt.Errorf("schema of %v for server-side apply: %w", res.GVK, err)
		}
	}
	specs, err := gen.Definitions().KubeOpenAPI()
	if err != nil {
		return nil, fmt.Errorf("schemas for server-side apply: %w", err)
	}
	tc, err := managedfields.NewTypeConverter(specs, false)
	if err != nil {
		return nil, fmt.Errorf("building server-side apply schemas: %w", err)
	}
	fms := &fieldManagers{byKey: map[fieldManagerKey]*managedfields.FieldManager{}, roots: map[schema.GroupVersionKind]typeRoot{}}
	for _, res := range reg.Resources() {
		empty := &unstructured.Unstructured{Object: map[string]any{}}
		empty.SetGroupVersionKind(res.GVK)
		tv, err := tc.ObjectToTyped(empty)
		if err != nil {
			return nil, fmt.Errorf("finding the server-side apply schema of %s: %w", res.GVK.Kind, err)
		}
		fms.roots[res.GVK] = typeRoot{schema: tv.Schema(), ref: tv.TypeRef()}
		// The main resource, and every subresource that writes the
		// object: the ones written whole under their own strategy, and
		// scale, which upstream records under its own name.
		subs := []string{""}
		for _, sub := range res.subresources {
			if sub.Update != nil || sub.Scale {
				subs = append(subs, sub.Name)
			}
		}
		for _, sub := range subs {
			fm, err := managedfields.NewDefaultFieldManager(tc, unversioned{}, unversioned{}, unversioned{},
				res.GVK, res.GroupVersion(), sub, resetFields(res, sub))
			if err != nil {
				return nil, err
			}
			fms.byKey[fieldManagerKey{res.GVK, sub}] = fm
		}
	}
	return fms, nil
}

func (f *fieldManagers) get(res *Resource, subresource string) *managedfields.FieldManager {
	return f.byKey[fieldManagerKey{res.GVK, subresource}]
}

func (f *fieldManagers) rootType(res *Resource) (typeRoot, bool) {
	r, ok := f.roots[res.GVK]
	return r, ok
}

// resetFields are the fields a write through subresource ("" for the main
// resource) cannot set, so no manager owns them through it: what a
// subresource written whole keeps (its strategy's ResetFields: /status the
// spec and labels), else what the main resource's rules keep, which /scale
// writes through (the status).
func resetFields(res *Resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	set := rest.MainResetFields(res.subresources)
	if sub, ok := res.objectSubresource(subresource); ok {
		set = sub.Update.ResetFields()
	}
	if set == nil {
		return nil
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(res.APIVersion()): fieldpath.NewExcludeSetFilter(set),
	}
}

// unversioned is the converter, defaulter and creater the field managers
// need: every resource has one version and the managers only see
// unstructured objects, so conversion is the identity and defaulting is
// done later by the write path.
type unversioned struct{}

func (unversioned) Convert(in, out, _ any) error {
	return fmt.Errorf("apiserver: conversion from %T to %T is not supported", in, out)
}

func (unversioned) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

func (unversioned) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (unversioned) Default(runtime.Object) {}

func (unversioned) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// toUnstructured is obj as the field managers see it (nil: an empty object
// of the resource's kind).
func toUnstructured(res *Resource, obj any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if obj != nil {
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding %s for managed fields: %w", res.GVK.Kind, err)
		}
		if err := sjson.UnmarshalCaseSensitivePreserveInts(data, &u.Object); err != nil {
			return nil, fmt.Errorf("decoding %s for managed fields: %w", res.GVK.Kind, err)
		}
	}
	u.SetGroupVersionKind(res.GVK)
	return u, nil
}

// trackUpdate records an Update by manager in obj's managedFields: the
// fields that changed from old (nil on create) now belong to manager. A
// request that sets managedFields replaces them, and an empty list resets
// them, as upstream; without them the stored ones are kept. If the fields
// cannot be computed the old ones are kept, as upstream's UpdateNoErrors.
func (s *Server) trackUpdate(res *Resource, info requestInfo, obj, old any) {
	keep := func(err error) {
		s.log.Warn("managed fields not updated", "kind", res.GVK.Kind, "name", store.Accessor(obj).GetName(), "err", err)
		if old != nil {
			store.Accessor(obj).SetManagedFields(store.Accessor(old).GetManagedFields())
		} else {
			store.Accessor(obj).SetManagedFields(nil)
		}
	}
	live, err := toUnstructured(res, old)
	if err != nil {
		keep(err)
		return
	}
	updated, err := toUnstructured(res, obj)
	if err != nil {
		keep(err)
		return
	}
	// JSON drops an empty list (omitempty), which is a reset request.
	updated.SetManagedFields(store.Accessor(obj).GetManagedFields())
	out, err := s.fields.get(res, info.Subresource).Update(live, updated, info.fieldManager)
	if err != nil {
		keep(err)
		return
	}
	m, err := metaOf(out)
	if err != nil {
		keep(err)
		return
	}
	store.Accessor(obj).SetManagedFields(m.GetManagedFields())
}

func metaOf(obj runtime.Object) (*unstructured.Unstructured, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("apiserver: field manager returned %T", obj)
	}
	return u, nil
}

// managerName is the fieldManager parameter, or else the User-Agent's
// product (the text before the first "/", printable characters only, at
// most 128 bytes), as kube-apiserver names managers.
func managerName(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	product, _, _ := strings.Cut(r.UserAgent(), "/")
	var b strings.Builder
	for _, c := range product {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > maxFieldManagerLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}
