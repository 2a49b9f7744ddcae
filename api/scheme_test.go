package api

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// ourPkg is the import path prefix of dnsplane's own types; the table's
// other kinds are upstream's.
const ourPkg = "github.com/dnsplane/dnsplane/api/"

func ours(obj any) bool { return strings.HasPrefix(reflect.TypeOf(obj).Elem().PkgPath(), ourPkg) }

// ourScheme is every dnsplane group's AddToScheme, as the generated
// clientset's scheme calls them.
func ourScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		dpcorev1.AddToScheme, dpappsv1.AddToScheme, dpbatchv1.AddToScheme, dpoperatorv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// The API server clones objects with DeepCopyObject (internal/apiserver
// cloneObject), so every kind the table serves must be a runtime.Object;
// dnsplane's kinds must also be in their group's scheme under the GVK the
// table gives them, with a List kind, or the generated client cannot decode
// them.
func TestEveryKindIsARuntimeObject(t *testing.T) {
	s := ourScheme(t)
	for _, r := range Resources() {
		t.Run(r.GVK.String(), func(t *testing.T) {
			obj, ok := r.New().(runtime.Object)
			if !ok {
				t.Fatalf("%T is not a runtime.Object", r.New())
			}
			if !ours(obj) {
				return
			}
			gvks, _, err := s.ObjectKinds(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gvks, []schema.GroupVersionKind{r.GVK}) {
				t.Errorf("scheme kinds %v, table %v", gvks, r.GVK)
			}
			list, err := s.New(r.GVK.GroupVersion().WithKind(r.GVK.Kind + "List"))
			if err != nil {
				t.Fatal(err)
			}
			if !meta.IsListType(list) {
				t.Errorf("%T is not a list type", list)
			}
		})
	}
}

// And the other way: a kind registered in a dnsplane scheme that the table
// does not serve would be a client for a resource that 404s.
func TestEverySchemeKindIsServed(t *testing.T) {
	for gvk, typ := range ourScheme(t).AllKnownTypes() {
		if !strings.HasPrefix(typ.PkgPath(), ourPkg) || strings.HasSuffix(gvk.Kind, "List") {
			continue // meta/v1 options types, and the lists checked above
		}
		if _, ok := Lookup(gvk); !ok {
			t.Errorf("%v (%v) is registered but not in api.Resources", gvk, typ)
		}
	}
}
