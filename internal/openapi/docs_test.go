package openapi

import (
	"reflect"
	"testing"
)

type docInner struct {
	A string `json:"a"`
	B string `json:"b"`
}

func (docInner) SwaggerDoc() map[string]string {
	return map[string]string{"": "inner", "a": "inner a", "b": "inner b"}
}

// docWrapper describes b, which it inherits, and c, which it declares.
type docWrapper struct {
	docInner `json:",inline"`
	C        string `json:"c"`
}

func (docWrapper) SwaggerDoc() map[string]string {
	return map[string]string{"b": "wrapper b", "c": "wrapper c"}
}

// docPlain has only the SwaggerDoc promoted from docInner.
type docPlain struct {
	docInner `json:",inline"`
}

// docOuter reaches docInner's fields through two embeddings, one a pointer.
type docOuter struct {
	*docWrapper `json:",inline"`
}

func TestFieldDescription(t *testing.T) {
	// A wrapper of the same name as the struct it embeds, redeclaring a
	// without a description (as a carrier redeclares template).
	type inner = docInner
	type docInner struct {
		inner `json:",inline"`
		A     int `json:"a"`
	}
	for _, tc := range []struct {
		name  string
		typ   reflect.Type
		field string
		want  string
	}{
		{"inherited, the wrapper silent", reflect.TypeFor[docWrapper](), "a", "inner a"},
		{"inherited, the wrapper overrides", reflect.TypeFor[docWrapper](), "b", "wrapper b"},
		{"declared by the wrapper", reflect.TypeFor[docWrapper](), "c", "wrapper c"},
		{"promoted SwaggerDoc", reflect.TypeFor[docPlain](), "b", "inner b"},
		{"outermost description first, through a pointer", reflect.TypeFor[docOuter](), "b", "wrapper b"},
		{"two levels down", reflect.TypeFor[docOuter](), "a", "inner a"},
		{"redeclared without a description", reflect.TypeFor[docInner](), "a", "inner a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *string
			for _, f := range jsonFields(tc.typ) {
				if f.name == tc.field {
					d := fieldDescription(tc.typ, f)
					got = &d
				}
			}
			switch {
			case got == nil:
				t.Fatalf("%v has no JSON field %q", tc.typ, tc.field)
			case *got != tc.want:
				t.Errorf("description of %v.%s = %q, want %q", tc.typ, tc.field, *got, tc.want)
			}
		})
	}
}
