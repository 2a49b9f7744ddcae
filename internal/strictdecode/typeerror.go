package strictdecode

import (
	"encoding/json"
	"reflect"
	"strings"
)

// dnsplane's API types shadow upstream ones by embedding them inline, e.g.
//
//	type DeploymentSpec struct {
//		appsv1.DeploymentSpec `json:",inline"`
//		Template corev1.PodTemplateSpec `json:"template"`
//	}
//
// The JSON decoder names embedded structs it passes through in the field of
// a type error, so a wrong replicas gives "Go struct field
// DeploymentSpec.spec.DeploymentSpec.replicas" where kube-apiserver, whose
// types have no such wrapper, says "DeploymentSpec.spec.replicas".
// upstreamTypeError removes exactly those hops: an embedded struct with the
// same type name as the struct embedding it (the shadowing pattern). Other
// embedded structs, such as TypeMeta, are named by upstream too and stay.

// upstreamTypeError returns err with the field path of a type error written
// as it would be for the upstream types. Any other error is returned as is.
//
// Only a type error returned directly by the decoder is rewritten: the result is
// a modified copy, so rewriting one found inside a wrapper would drop the
// wrapper's text, and the message must stay byte-identical to kube-apiserver's.
func upstreamTypeError(into any, err error) error {
	te, ok := err.(*json.UnmarshalTypeError) //nolint:errorlint // only the decoder's own top-level error; see above
	if !ok || te.Field == "" || into == nil {
		return err
	}
	field, changed := dropShadowHops(reflect.TypeOf(into), te.Field)
	if !changed {
		return err
	}
	fixed := *te
	fixed.Field = field
	return &fixed
}

// dropShadowHops follows the dotted field path from type t and drops the
// segments that are shadowing hops. If the path cannot be followed, it is
// returned unchanged.
func dropShadowHops(t reflect.Type, field string) (string, bool) {
	segs := strings.Split(field, ".")
	kept := make([]string, 0, len(segs))
	changed := false
	cur := t
	for _, s := range segs {
		cur = elemType(cur)
		if cur.Kind() != reflect.Struct {
			return field, false
		}
		if ef, ok := embeddedByName(cur, s); ok {
			et := elemType(ef.Type)
			if et.Name() == cur.Name() && et.PkgPath() != cur.PkgPath() {
				changed = true
			} else {
				kept = append(kept, s)
			}
			cur = ef.Type
			continue
		}
		f, ok := fieldByJSONName(cur, s, 0)
		if !ok {
			return field, false
		}
		kept = append(kept, s)
		cur = f.Type
	}
	if !changed {
		return field, false
	}
	return strings.Join(kept, "."), true
}

// elemType looks through pointers, slices, arrays and maps: the decoder's
// field path does not name items or map keys.
func elemType(t reflect.Type) reflect.Type {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		default:
			return t
		}
	}
}

// jsonName is the JSON name of a field and whether it has one in its tag.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name, false
	}
	return name, true
}

// embeddedByName finds an embedded struct field that the decoder treats as
// promoted (no JSON name) by its Go name.
func embeddedByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.Anonymous || f.Name != name || f.Tag.Get("json") == "-" {
			continue
		}
		if _, named := jsonName(f); !named && elemType(f.Type).Kind() == reflect.Struct {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// fieldByJSONName finds the field the decoder would use for a JSON name:
// the struct's own fields first, then those promoted from embedded structs.
func fieldByJSONName(t reflect.Type, name string, depth int) (reflect.StructField, bool) {
	if depth > 16 {
		return reflect.StructField{}, false
	}
	var embedded []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("json") == "-" {
			continue
		}
		n, named := jsonName(f)
		if f.Anonymous && !named && elemType(f.Type).Kind() == reflect.Struct {
			embedded = append(embedded, f)
			continue
		}
		if f.IsExported() && n == name {
			return f, true
		}
	}
	for _, e := range embedded {
		if f, ok := fieldByJSONName(elemType(e.Type), name, depth+1); ok {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
