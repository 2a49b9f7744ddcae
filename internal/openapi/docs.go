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

func callSwaggerDoc(t reflect.Type) (docs map[string]string) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	d, ok := reflect.New(t).Interface().(swaggerDoccer)
	if !ok {
		return nil
	}
	defer func() {
		// A SwaggerDoc promoted through an embedded pointer runs on the
		// zero value's nil pointer and panics. It would not be t's own
		// description anyway (swaggerDoc): t has none.
		if recover() != nil {
			docs = nil
		}
	}()
	return d.SwaggerDoc()
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

// fieldDescription is the description of field f of struct t. The structs
// on the way from t down to the one that declares f are asked outermost
// first, so a wrapper's own SwaggerDoc overrides the description of a field
// it inherits from the upstream struct it embeds: dnsplane's PodSpec
// describes dnsPolicy with its six policies where corev1.PodSpec names four
// (hack/swaggerdoc, "+dnsplane:swaggerdoc:field"). A field the wrapper
// redeclares without a description of its own takes the one of the field
// it shadows in the same-named struct it embeds.
func fieldDescription(t reflect.Type, f jsonField) string {
	for _, i := range f.index[:len(f.index)-1] {
		if d := swaggerDoc(t)[f.name]; d != "" {
			return d
		}
		t = t.Field(i).Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	for t != nil {
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
