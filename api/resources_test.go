package api

import "testing"

// TestSharedStorageRows: a row stored as another kind shares that row's
// storage key prefix, so both must have the same plural and scope, and the
// other row must store its objects itself (no chains).
func TestSharedStorageRows(t *testing.T) {
	shared := 0
	for _, r := range Resources() {
		if r.StorageGVK.Empty() {
			if r.StoredAs() != r.GVK {
				t.Errorf("%s: StoredAs %s, want its own kind", r.GVK, r.StoredAs())
			}
			continue
		}
		shared++
		s, ok := Lookup(r.StorageGVK)
		switch {
		case !ok:
			t.Errorf("%s is stored as %s, which is not served", r.GVK, r.StorageGVK)
		case s.Plural != r.Plural || s.Namespaced != r.Namespaced:
			t.Errorf("%s (%s, namespaced %v) shares the storage of %s (%s, namespaced %v): plural and scope must match",
				r.GVK, r.Plural, r.Namespaced, s.GVK, s.Plural, s.Namespaced)
		case !s.StorageGVK.Empty():
			t.Errorf("%s is stored as %s, itself stored as %s", r.GVK, s.GVK, s.StorageGVK)
		}
	}
	if shared == 0 {
		t.Error("no row shares storage; events.k8s.io/v1 Events should")
	}
}
