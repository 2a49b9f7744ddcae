package openapi

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Version selects the OpenAPI dialect a Generator writes.
type Version int

const (
	// V2 is Swagger 2.0: $ref to #/definitions/, a property that refers to
	// a definition has its description next to the $ref.
	V2 Version = iota
	// V3 is OpenAPI 3.0: $ref to #/components/schemas/, a property that
	// refers to a definition wraps the $ref in a one-element allOf (as
	// kube-apiserver does), and self-decoding types list oneOf types.
	V3
)

const (
	refPrefixV2 = "#/definitions/"
	refPrefixV3 = "#/components/schemas/"
)

// Generator turns Go types into definitions. It is not safe for concurrent
// use; build the definitions once and share the result.
type Generator struct {
	version Version
	defs    Definitions
	byType  map[reflect.Type]string
	err     error
}

// NewGenerator returns a Generator writing the given dialect.
func NewGenerator(v Version) *Generator {
	return &Generator{version: v, defs: Definitions{}, byType: map[reflect.Type]string{}}
}

// AddKind adds the definitions of obj's type (a pointer to a struct, as
// api.New returns) and everything it refers to, marks the type's definition
// with gvk in x-kubernetes-group-version-kind, and returns its name.
func (g *Generator) AddKind(gvk schema.GroupVersionKind, obj any) (string, error) {
	t := reflect.TypeOf(obj)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct || t.Name() == "" {
		return "", fmt.Errorf("openapi: %v: %T is not a named struct", gvk, obj)
	}
	name, err := g.AddType(t)
	if err != nil {
		return "", err
	}
	def := g.defs[name]
	entry := GroupVersionKind{Group: gvk.Group, Kind: gvk.Kind, Version: gvk.Version}
	for _, e := range def.GroupVersionKind {
		if e == entry {
			return name, nil
		}
	}
	def.GroupVersionKind = append(def.GroupVersionKind, entry)
	return name, nil
}

// AddType adds the definition of named struct type t and of every type it
// refers to, and returns t's definition name.
func (g *Generator) AddType(t reflect.Type) (string, error) {
	if g.err != nil {
		return "", g.err
	}
	name := g.define(t)
	return name, g.err
}

// Definitions returns the definitions added so far. The map and schemas
// belong to the Generator.
func (g *Generator) Definitions() Definitions { return g.defs }

// Ref returns a schema that refers to the named definition.
func (g *Generator) Ref(name string) *Schema {
	if g.version == V3 {
		return &Schema{Ref: refPrefixV3 + name}
	}
	return &Schema{Ref: refPrefixV2 + name}
}

func (g *Generator) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// define adds the definition of a named struct (or self-decoding) type.
func (g *Generator) define(t reflect.Type) string {
	if name, ok := g.byType[t]; ok {
		return name
	}
	name := DefinitionName(t)
	if other, ok := g.defs[name]; ok && other != nil {
		g.fail(fmt.Errorf("openapi: two types are named %s", name))
		return name
	}
	g.byType[t] = name
	def := &Schema{}
	g.defs[name] = def // before the fields: types may be recursive
	if decodesItself(t) {
		s, err := g.customSchema(t)
		if err != nil {
			g.fail(err)
			return name
		}
		*def = *s
	} else {
		*def = *g.structSchema(t)
	}
	if def.Description == "" {
		def.Description = typeDescription(t)
	}
	return name
}

// structSchema is the object schema of a struct's JSON fields.
func (g *Generator) structSchema(t reflect.Type) *Schema {
	s := &Schema{Type: "object"}
	for _, f := range jsonFields(t) {
		if s.Properties == nil {
			s.Properties = map[string]*Schema{}
		}
		p := g.schemaOf(f.typ)
		if f.quoted && p.Type != "" && p.Ref == "" {
			p = &Schema{Type: "string"}
		}
		desc := fieldDescription(t, f)
		switch {
		case p.Ref != "" && g.version == V3:
			p = &Schema{AllOf: []*Schema{p}}
		case p.Ref != "":
			p = &Schema{Ref: p.Ref}
		}
		p.Description = desc
		patchExtensions(p, f.field)
		if err := applyMarkers(p, kubebuilderMarkers(t)[f.name], f.typ); err != nil {
			g.fail(fmt.Errorf("openapi: %v.%s: %w", t, f.name, err))
		}
		s.Properties[f.name] = p
	}
	return s
}

// schemaOf is the schema of a value of type t: a $ref for named structs,
// inline otherwise. The schema returned is new and may be modified.
func (g *Generator) schemaOf(t reflect.Type) *Schema {
	if t.Kind() == reflect.Pointer {
		return g.schemaOf(t.Elem())
	}
	if decodesItself(t) || (t.Kind() == reflect.Struct && t.Name() != "") {
		if t.Name() == "" {
			g.fail(fmt.Errorf("openapi: unnamed type %v decodes itself", t))
			return &Schema{}
		}
		return g.Ref(g.define(t))
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &Schema{Type: "integer", Format: "int32"}
	case reflect.Int64, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Format: "int64"}
	case reflect.Float32:
		return &Schema{Type: "number", Format: "float"}
	case reflect.Float64:
		return &Schema{Type: "number", Format: "double"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !decodesItself(t.Elem()) {
			return &Schema{Type: "string", Format: "byte"}
		}
		return &Schema{Type: "array", Items: g.schemaOf(t.Elem())}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: g.schemaOf(t.Elem())}
	case reflect.Struct:
		return g.structSchema(t)
	case reflect.Interface:
		return &Schema{PreserveUnknownFields: true} // any JSON value
	}
	g.fail(fmt.Errorf("openapi: type %v (%v) has no JSON form", t, t.Kind()))
	return &Schema{}
}
