package store

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// Accessor returns the metadata of one of our objects; every type in the
// registry embeds ObjectMeta, so a failure is a programming error.
func Accessor(obj any) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("store: %T has no object metadata: %v", obj, err))
	}
	return m
}

// Key is <resource>/<namespace>/<name>, or <resource>/<name> for a
// cluster-scoped resource.
func Key(r *api.Resource, namespace, name string) string {
	if r.Namespaced {
		return r.Plural + "/" + namespace + "/" + name
	}
	return r.Plural + "/" + name
}

// ListPrefix is the storage prefix of a list, in a namespace or across all.
func ListPrefix(r *api.Resource, namespace string) string {
	if r.Namespaced && namespace != "" {
		return r.Plural + "/" + namespace + "/"
	}
	return r.Plural + "/"
}

// Encode returns the stored form: resourceVersion is not stored, because
// it is the etcd revision of the write itself. A resource that is a view of
// another kind's objects (api.Resource.StorageGVK) is stored as that kind,
// so every view reads what any of them wrote.
func Encode(r *api.Resource, obj any) ([]byte, error) {
	m := Accessor(obj)
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	defer m.SetResourceVersion(rv)
	SetTypeMeta(r, obj)
	stored, err := toStorageKind(r, obj)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %q: %w", r.GVK.Kind, m.GetName(), err)
	}
	return data, nil
}

// Decode returns the object stored in kv, in r's kind, with
// resourceVersion set.
func Decode(r *api.Resource, kv storage.KV) (any, error) {
	obj := r.New()
	storedAs := r.StoredAs()
	stored := obj
	if storedAs != r.GVK {
		var ok bool
		if stored, ok = api.New(storedAs); !ok {
			return nil, fmt.Errorf("decoding stored %s: %s is not served", kv.Key, storedAs)
		}
	}
	if err := json.Unmarshal(kv.Value, stored); err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", kv.Key, err)
	}
	if storedAs != r.GVK {
		if err := convertKind(stored, obj, storedAs.GroupKind()); err != nil {
			return nil, fmt.Errorf("decoding stored %s as %s: %w", kv.Key, r.GVK, err)
		}
	}
	SetTypeMeta(r, obj)
	Accessor(obj).SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return obj, nil
}

// toStorageKind returns obj as the kind r's objects are stored as: obj
// itself, or its conversion with the storage kind's type meta.
func toStorageKind(r *api.Resource, obj any) (any, error) {
	storedAs := r.StoredAs()
	if storedAs == r.GVK {
		return obj, nil
	}
	stored, ok := api.New(storedAs)
	if !ok {
		return nil, fmt.Errorf("storing %s: %s is not served", r.GVK, storedAs)
	}
	if err := convertKind(obj, stored, storedAs.GroupKind()); err != nil {
		return nil, fmt.Errorf("storing %s %q as %s: %w", r.GVK.Kind, Accessor(obj).GetName(), storedAs, err)
	}
	kindOf(stored).SetGroupVersionKind(storedAs)
	return stored, nil
}

// convertKind converts between two versions of a kind with upstream's
// conversion functions, through hub's internal type.
func convertKind(in, out any, hub schema.GroupKind) error {
	i, ok := in.(runtime.Object)
	o, ok2 := out.(runtime.Object)
	if !ok || !ok2 {
		return fmt.Errorf("converting %T to %T: not runtime objects", in, out)
	}
	if err := upstream.ConvertVersion(i, o, hub); err != nil {
		return fmt.Errorf("converting to %T: %w", out, err)
	}
	return nil
}

// SetTypeMeta sets obj's apiVersion and kind to r's.
func SetTypeMeta(r *api.Resource, obj any) {
	kindOf(obj).SetGroupVersionKind(r.GVK)
}

// kindOf returns the TypeMeta of one of our objects: each embeds
// metav1.TypeMeta, whose GetObjectKind is promoted.
func kindOf(obj any) schema.ObjectKind {
	k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind })
	if !ok {
		panic(fmt.Sprintf("store: %T has no type metadata", obj))
	}
	return k.GetObjectKind()
}

// Clone deep-copies one of our objects. Every kind in api.Resources is a
// runtime.Object (upstream's, or dnsplane's with the generated
// DeepCopyObject; api's TestEveryKindIsARuntimeObject), so a failed
// assertion is a programming error.
func Clone(obj any) any {
	o, ok := obj.(runtime.Object)
	if !ok {
		panic(fmt.Sprintf("store: cloning %T: not a runtime.Object", obj))
	}
	return o.DeepCopyObject()
}
