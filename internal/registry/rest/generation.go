package rest

import (
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// Generational is a Strategy whose kind keeps metadata.generation, as the
// kinds whose upstream strategy sets it (PrepareForCreate and
// PrepareForUpdate in pkg/registry/<group>/<kind>/strategy.go): 1 on
// create, and one more on each update of the main resource that changes
// what the kind counts as desired state. A kind without it keeps no
// generation (ConfigMaps, Services, Nodes, Namespaces, Leases, …): it stays
// 0 and is left out of the object, as in kube-apiserver. No write to a
// subresource moves it.
type Generational interface {
	// GenerationChanged reports whether obj replacing old starts a new
	// generation.
	GenerationChanged(obj, old any) bool
}

// SpecChanged is the rule of most kinds: the spec differs, compared as
// upstream compares it (apiequality.Semantic). Objects are pointers to
// structs with a Spec field.
func SpecChanged(obj, old any) bool { return FieldChanged("Spec", obj, old) }

// FieldChanged reports whether the named top-level field of obj and old
// differs semantically.
func FieldChanged(name string, obj, old any) bool {
	a, b := reflect.ValueOf(obj).Elem().FieldByName(name), reflect.ValueOf(old).Elem().FieldByName(name)
	if !a.IsValid() || !b.IsValid() {
		return false
	}
	return !apiequality.Semantic.DeepEqual(a.Interface(), b.Interface())
}
