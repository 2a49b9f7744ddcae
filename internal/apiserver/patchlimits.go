package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// Limits on the work one patch or apply may cause. Each is checked before
// the step it protects, not after it: the JSON patch limits before the
// operations run, the size floors before structured-merge-diff (whose cost
// grows with the square of a map's keys: fieldpath sets insert into sorted
// slices, and maps arrive in random order; see
// kubernetes-sigs/structured-merge-diff#310 for the same shape in FromJSON),
// and the list-merge price before strategicpatch.
const (
	// maxJSONPatchOperations is kube-apiserver's limit on the operations
	// of one JSON patch (kubernetes#74000): 413 over it.
	maxJSONPatchOperations = 10000
	// maxJSONPatchCopyBytes bounds what the "copy" operations of one JSON
	// patch may add up to. kube-apiserver sets json-patch's
	// AccumulatedCopySizeLimit to its request body limit
	// (JSONPatchMaxCopyBytes, 3 MiB); without it, copying a value onto
	// itself doubles the document with every operation.
	maxJSONPatchCopyBytes = MaxRequestBodyBytes
	// embeddedEtcdMaxObjectBytes is etcd's default --max-request-bytes
	// (1.5 MiB), which the embedded etcd keeps: no object whose JSON is
	// larger can be stored, whatever else the request holds.
	embeddedEtcdMaxObjectBytes = 3 << 19
)

// sizeLimit is a limit on the bytes of an object and what imposes it, for
// the error that names it.
type sizeLimit struct {
	bytes int
	by    string
}

// decodeLimit is the largest document the server decodes as an object
// (strictdecode.MaxDocumentSize, the request body limit): every patched
// or applied object is decoded before it is stored.
func decodeLimit() sizeLimit {
	return sizeLimit{MaxRequestBodyBytes, "the server accepts for an object"}
}

// storageLimit is the largest object storage takes, when the server knows
// it (Config.MaxObjectBytes); ok is false when it does not.
func (s *Server) storageLimit() (sizeLimit, bool) {
	if n := s.cfg.MaxObjectBytes; n > 0 {
		return sizeLimit{n, "etcd accepts per object"}, true
	}
	return sizeLimit{}, false
}

// objectLimit is the tighter of the storage and the decode limit: what a
// lower bound of both the decoded and the stored object is checked against.
func (s *Server) objectLimit() sizeLimit {
	if l, ok := s.storageLimit(); ok && l.bytes < MaxRequestBodyBytes {
		return l
	}
	return decodeLimit()
}

// errObjectTooLarge is the 413 for an object that cannot be accepted,
// found before the work that would have built it. what names the object
// ("the patched object"); size is a lower bound of its size.
func errObjectTooLarge(what string, size int, l sizeLimit) error {
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
		"%s is at least %d bytes, more than the %d bytes (%g MiB) %s", what, size, l.bytes, float64(l.bytes)/(1<<20), l.by))
}

// errJSONPatchFailed is kube-apiserver's answer to a JSON patch that
// fails to apply, which is how a patch over the copy limit fails: a
// generic 422 Invalid, "the server rejected our request due to an error
// in our request", with empty details. Upstream's patch.go hands
// json-patch's error to NewGenericServerResponse as the server message,
// which that constructor drops; so does this.
func errJSONPatchFailed(err error) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
}

// storedSizeFloor is a lower bound of the JSON storage will hold for obj,
// decoded from a patched document of docBytes: obj without managedFields
// (kube drops them and retries when a patched object is too large) and,
// where the write cannot change it, without the status. It is 0 when
// docBytes is small enough that obj cannot reach limit (the encoding
// grows a document by less than 8×), so small patches pay nothing.
func storedSizeFloor(res *Resource, subresource string, obj any, docBytes, limit int) (int, error) {
	if docBytes <= limit/8 {
		return 0, nil
	}
	size := func(v any) (int, error) {
		data, err := json.Marshal(v)
		if err != nil {
			return 0, fmt.Errorf("measuring the patched %s: %w", res.GVK.Kind, err)
		}
		return len(data), nil
	}
	status := statusValue(obj)
	if subresource == rest.StatusName {
		if !status.IsValid() {
			return 0, nil
		}
		// Only the status is taken from the patched object.
		return size(status.Interface())
	}
	n, err := size(obj)
	if err != nil {
		return 0, err
	}
	mf, err := size(store.Accessor(obj).GetManagedFields())
	if err != nil {
		return 0, err
	}
	n -= mf
	if res.HasStatus() && status.IsValid() {
		// The main resource keeps the stored status.
		st, err := size(status.Interface())
		if err != nil {
			return 0, err
		}
		n -= st
	}
	return n, nil
}

// appliedSizeFloor is a lower bound of the size of the object an apply
// produces, computed from the apply body alone in linear time, so a body
// that cannot fit is refused before structured-merge-diff merges it: the
// merged object holds every field of the body (the applier's values win,
// or the apply fails with a conflict) except those the server resets, and
// its managedFields hold an "f:<name>":{} entry for each of them that
// the schema does not make part of an atomic value. typed is the body
// decoded into the resource's Go type (unknown fields dropped), doc its
// JSON. Like storedSizeFloor it is 0 for bodies too small to matter.
func (s *Server) appliedSizeFloor(res *Resource, subresource string, typed any, body map[string]any, docBytes, limit int) (int, error) {
	// JSON text grows less than 6× when re-encoded (\u escapes), and
	// each key adds at most its length plus 7 bytes of managedFields.
	if docBytes <= limit/16 {
		return 0, nil
	}
	m := store.Accessor(typed)
	// The server sets these from the live object (or anew).
	m.SetUID("")
	m.SetResourceVersion("")
	m.SetGeneration(0)
	m.SetCreationTimestamp(metav1.Time{})
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetManagedFields(nil)
	kept := any(typed)
	status := statusValue(typed)
	switch {
	case subresource == rest.StatusName && status.IsValid():
		kept = status.Interface()
	case res.HasStatus() && status.IsValid():
		rest.ResetStatus(typed)
	}
	data, err := json.Marshal(kept)
	if err != nil {
		return 0, fmt.Errorf("measuring the applied %s: %w", res.GVK.Kind, err)
	}
	root, ok := s.fields.rootType(res)
	if !ok {
		return len(data), nil
	}
	atom, ok := root.schema.Resolve(root.ref)
	if !ok || atom.Map == nil {
		return len(data), nil
	}
	fields := 0
	for k, v := range body {
		if v == nil {
			continue
		}
		sf, ok := atom.FindField(k)
		if !ok {
			continue
		}
		switch {
		case k == "apiVersion" || k == "kind":
			// Not managed fields.
		case subresource == rest.StatusName:
			if k == "status" {
				fields += managedEntryBytes(k) + managedFieldsBytes(root.schema, sf.Type, v)
			}
		case k == "status" && res.HasStatus():
			// Reset: the main resource never takes the status.
		case k == "metadata":
			// Of the metadata only labels and annotations are managed
			// by key; the server owns or strips the rest.
			md, _ := v.(map[string]any)
			mdAtom, ok := root.schema.Resolve(sf.Type)
			if !ok || mdAtom.Map == nil {
				continue
			}
			entry := managedEntryBytes(k)
			for _, name := range []string{"labels", "annotations"} {
				if mv, ok := md[name]; ok && mv != nil {
					if f, ok := mdAtom.FindField(name); ok {
						fields += entry + managedEntryBytes(name) + managedFieldsBytes(root.schema, f.Type, mv)
						entry = 0
					}
				}
			}
		default:
			fields += managedEntryBytes(k) + managedFieldsBytes(root.schema, sf.Type, v)
		}
	}
	return len(data) + fields, nil
}

// managedEntryBytes is the least a field adds to a FieldsV1 set:
// "f:<name>":{}.
func managedEntryBytes(name string) int { return len(name) + 7 }

// managedFieldsBytes is a lower bound of the FieldsV1 entries below a
// value of type tr: one per key of a map or struct that is not atomic,
// recursively. Lists add nothing here (their entries depend on keys and
// duplicates), nor do unknown fields (structured-merge-diff rejects them).
func managedFieldsBytes(sch *smdschema.Schema, tr smdschema.TypeRef, v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	atom, ok := sch.Resolve(tr)
	if !ok || atom.Map == nil || atom.Map.ElementRelationship == smdschema.Atomic {
		return 0
	}
	n := 0
	for k, ev := range m {
		if ev == nil {
			continue
		}
		ft := atom.Map.ElementType
		if sf, ok := atom.FindField(k); ok {
			ft = sf.Type
		} else if ft == (smdschema.TypeRef{}) {
			continue
		}
		n += managedEntryBytes(k) + managedFieldsBytes(sch, ft, ev)
	}
	return n
}

// metadataSizeFloor is a lower bound, computed in linear time, of the
// JSON storage would hold for obj once a create or update tracked its
// managed fields: each label and annotation is "<key>":"<value>", in the
// object and again as "f:<key>":{} in its managedFields entry. It is what
// makes a create with 100,000 labels fail in milliseconds: building the
// managed fields of such a map is quadratic (structured-merge-diff's
// fieldpath sets insert into sorted slices, keys arrive in random order)
// and took ~10s of CPU before etcd refused the result (issue 29). kube
// bounds annotations to 256 KiB in validation but not labels, so an object
// that can be stored is still accepted, as upstream's.
func metadataSizeFloor(obj any) int {
	m := store.Accessor(obj)
	n := 0
	for _, kv := range []map[string]string{m.GetLabels(), m.GetAnnotations()} {
		for k, v := range kv {
			// "k":"v", plus "f:k":{}, each with its comma.
			n += len(k) + len(v) + 6 + len(k) + 8
		}
	}
	return n
}

// checkMetadataFloor refuses, with the 413 of a too large object, a
// create or update whose labels and annotations alone cannot be stored.
func (s *Server) checkMetadataFloor(obj any) error {
	limit := s.objectLimit()
	if floor := metadataSizeFloor(obj); floor > limit.bytes {
		return errObjectTooLarge("the object with its managed fields", floor, limit)
	}
	return nil
}

// statusValue is obj's Status field; invalid when the kind has none.
func statusValue(obj any) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status")
}
