package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether the decoder hands t's JSON to t's own
// UnmarshalJSON or UnmarshalText instead of using its fields.
func decodesItself(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		return false
	}
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler)
}

type openAPISchemaTyper interface {
	OpenAPISchemaType() []string
	OpenAPISchemaFormat() string
}

type openAPIV3OneOfTyper interface {
	OpenAPIV3OneOfTypes() []string
}

// opaqueObjects are types that decode any JSON object themselves.
var opaqueObjects = map[reflect.Type]bool{
	reflect.TypeFor[runtime.RawExtension](): true,
	reflect.TypeFor[metav1.FieldsV1]():      true,
}

// customSchema is the schema of a type that decodes itself, from the
// OpenAPISchemaType/Format/V3OneOfTypes methods upstream's types declare
// (the source kube-openapi uses too), or the opaque object table.
func (g *Generator) customSchema(t reflect.Type) (*Schema, error) {
	v := reflect.New(t).Interface()
	if opaqueObjects[t] {
		return &Schema{Type: "object", PreserveUnknownFields: true}, nil
	}
	typer, ok := v.(openAPISchemaTyper)
	if !ok {
		return nil, fmt.Errorf("openapi: %v decodes itself (UnmarshalJSON) and has no known schema", t)
	}
	types := typer.OpenAPISchemaType()
	if len(types) != 1 {
		return nil, fmt.Errorf("openapi: %v: OpenAPISchemaType %v", t, types)
	}
	s := &Schema{Type: types[0], Format: typer.OpenAPISchemaFormat()}
	if oneOf, ok := v.(openAPIV3OneOfTyper); ok && g.version == V3 {
		s.Type = ""
		for _, typ := range oneOf.OpenAPIV3OneOfTypes() {
			s.OneOf = append(s.OneOf, &Schema{Type: typ})
		}
		if len(s.OneOf) == 2 && s.OneOf[0].Type == "integer" && s.OneOf[1].Type == "string" {
			s.IntOrString = true
		}
	}
	return s, nil
}
