package apiserver

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// accessor returns the metadata of one of our objects; every type in the
// registry embeds ObjectMeta, so a failure is a programming error.
func accessor(obj any) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("apiserver: %T has no object metadata: %v", obj, err))
	}
	return m
}

// storageKey is <resource>/<namespace>/<name>, or <resource>/<name> for a
// cluster-scoped resource.
func storageKey(res *Resource, namespace, name string) string {
	if res.Namespaced {
		return res.Plural + "/" + namespace + "/" + name
	}
	return res.Plural + "/" + name
}

// listPrefix is the storage prefix of a list, in a namespace or across all.
func listPrefix(res *Resource, namespace string) string {
	if res.Namespaced && namespace != "" {
		return res.Plural + "/" + namespace + "/"
	}
	return res.Plural + "/"
}

// encodeForStorage returns the stored form: resourceVersion is not stored,
// because it is the etcd revision of the write itself. A resource that is
// a view of another kind's objects (api.Resource.StorageGVK) is stored as
// that kind, so every view reads what any of them wrote.
func encodeForStorage(res *Resource, obj any) ([]byte, error) {
	m := accessor(obj)
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	defer m.SetResourceVersion(rv)
	setTypeMeta(res, obj)
	stored, err := toStorageKind(res, obj)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %q: %w", res.GVK.Kind, m.GetName(), err)
	}
	return data, nil
}

// decodeStored returns the object stored in kv, in res's kind, with
// resourceVersion set.
func decodeStored(res *Resource, kv storage.KV) (any, error) {
	obj := res.New()
	storedAs := res.StoredAs()
	stored := obj
	if storedAs != res.GVK {
		var ok bool
		if stored, ok = api.New(storedAs); !ok {
			return nil, fmt.Errorf("decoding stored %s: %s is not served", kv.Key, storedAs)
		}
	}
	if err := json.Unmarshal(kv.Value, stored); err != nil {
		return nil, fmt.Errorf("decoding stored %s: %w", kv.Key, err)
	}
	if storedAs != res.GVK {
		if err := convertKind(stored, obj, storedAs.GroupKind()); err != nil {
			return nil, fmt.Errorf("decoding stored %s as %s: %w", kv.Key, res.GVK, err)
		}
	}
	setTypeMeta(res, obj)
	accessor(obj).SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	return obj, nil
}

// toStorageKind returns obj as the kind res's objects are stored as: obj
// itself, or its conversion with the storage kind's type meta.
func toStorageKind(res *Resource, obj any) (any, error) {
	storedAs := res.StoredAs()
	if storedAs == res.GVK {
		return obj, nil
	}
	stored, ok := api.New(storedAs)
	if !ok {
		return nil, fmt.Errorf("storing %s: %s is not served", res.GVK, storedAs)
	}
	if err := convertKind(obj, stored, storedAs.GroupKind()); err != nil {
		return nil, fmt.Errorf("storing %s %q as %s: %w", res.GVK.Kind, accessor(obj).GetName(), storedAs, err)
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

func setTypeMeta(res *Resource, obj any) {
	kindOf(obj).SetGroupVersionKind(res.GVK)
}

// kindOf returns the TypeMeta of one of our objects: each embeds
// metav1.TypeMeta, whose GetObjectKind is promoted.
func kindOf(obj any) schema.ObjectKind {
	k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind })
	if !ok {
		panic(fmt.Sprintf("apiserver: %T has no type metadata", obj))
	}
	return k.GetObjectKind()
}

// initMetadata sets what the server owns on create.
func initMetadata(obj any, now time.Time) {
	m := accessor(obj)
	m.SetUID(types.UID(uuid.NewUUID()))
	m.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	// initGeneration sets it for the kinds that keep one.
	m.SetGeneration(0)
}

// keepServerMetadata copies what a client may not change on update.
func keepServerMetadata(obj, old any) {
	m, o := accessor(obj), accessor(old)
	m.SetUID(o.GetUID())
	m.SetCreationTimestamp(o.GetCreationTimestamp())
	m.SetDeletionTimestamp(o.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(o.GetDeletionGracePeriodSeconds())
	m.SetGeneration(o.GetGeneration())
	if m.GetManagedFields() == nil {
		m.SetManagedFields(o.GetManagedFields())
	}
}

// generateName appends 5 random lower-case alphanumerics, as upstream's
// SimpleNameGenerator does, so names from the same prefix rarely collide.
func generateName(prefix string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	const maxPrefix = 63 - 5
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}
