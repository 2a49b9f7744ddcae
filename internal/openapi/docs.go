package openapi

import (
	"reflect"
)

type swaggerDoccer interface{ SwaggerDoc() map[string]string }

// swaggerDoc returns the descriptions a struct type declares itself with a
// SwaggerDoc method (key "" is the type's, the others are JSON field
// names). A SwaggerDoc promoted from an embedded struct is not the outer
// type's own and gives nil.
func swaggerDoc(t reflect.Type) map[string]string {
	docs := callSwaggerDoc(t)
	if docs == nil {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.Anonymous {
			continue
		}
		if inner := callSwaggerDoc(sf.Type); inner != nil && reflect.DeepEqual(inner, docs) {
			return nil
		}
	}
	return docs
}

func callSwaggerDoc(t reflect.Type) map[string]string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if d, ok := reflect.New(t).Interface().(swaggerDoccer); ok {
		return d.SwaggerDoc()
	}
	return nil
}

// typeDescription is a struct's description: its own, or else that of the
// embedded struct of the same name it wraps (dnsplane's PodSpec wraps
// corev1.PodSpec).
func typeDescription(t reflect.Type) string {
	if d := swaggerDoc(t)[""]; d != "" {
		return d
	}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if sf.Anonymous && ft.Kind() == reflect.Struct && ft.Name() == t.Name() {
			return typeDescription(ft)
		}
	}
	return ""
}

// fieldDescription is the description of a field from the SwaggerDoc of the
// struct that declares it, or else from the wrapped same-named struct's
// (for a wrapper's redeclared field such as template).
func fieldDescription(f jsonField) string {
	for t := f.owner; t != nil; {
		if d := swaggerDoc(t)[f.name]; d != "" {
			return d
		}
		var next reflect.Type
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Type.Name() == t.Name() {
				next = sf.Type
			}
		}
		t = next
	}
	return ""
}
