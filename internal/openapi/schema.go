package openapi

import (
	"encoding/json"
	"fmt"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Schema is one OpenAPI schema object, shaped so that encoding/json writes
// the Swagger 2.0 and OpenAPI 3.0 form directly (with the Generator's
// Version deciding what differs). Only what the generator emits is here.
type Schema struct {
	Ref         string    `json:"$ref,omitempty"`
	AllOf       []*Schema `json:"allOf,omitempty"`
	OneOf       []*Schema `json:"oneOf,omitempty"`
	Description string    `json:"description,omitempty"`
	Type        string    `json:"type,omitempty"`
	Format      string    `json:"format,omitempty"`

	// Enum, Default and the bounds come from a type's +kubebuilder
	// markers (markers.go).
	Enum     []any    `json:"enum,omitempty"`
	Default  any      `json:"default,omitempty"`
	Minimum  *float64 `json:"minimum,omitempty"`
	Maximum  *float64 `json:"maximum,omitempty"`
	MinItems *int64   `json:"minItems,omitempty"`
	MaxItems *int64   `json:"maxItems,omitempty"`

	Items                *Schema            `json:"items,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`

	GroupVersionKind      []GroupVersionKind `json:"x-kubernetes-group-version-kind,omitempty"`
	IntOrString           bool               `json:"x-kubernetes-int-or-string,omitempty"`
	ListMapKeys           []string           `json:"x-kubernetes-list-map-keys,omitempty"`
	ListType              string             `json:"x-kubernetes-list-type,omitempty"`
	PatchMergeKey         string             `json:"x-kubernetes-patch-merge-key,omitempty"`
	PatchStrategy         string             `json:"x-kubernetes-patch-strategy,omitempty"`
	PreserveUnknownFields bool               `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
}

// GroupVersionKind is one element of x-kubernetes-group-version-kind.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// RefName is the definition name a schema refers to (through $ref, or the
// one-element allOf of a v3 property), or "".
func (s *Schema) RefName() string {
	if s == nil {
		return ""
	}
	ref := s.Ref
	if ref == "" && len(s.AllOf) == 1 {
		ref = s.AllOf[0].Ref
	}
	for _, p := range []string{refPrefixV2, refPrefixV3} {
		if len(ref) > len(p) && ref[:len(p)] == p {
			return ref[len(p):]
		}
	}
	return ""
}

// Definitions maps definition names to schemas.
type Definitions map[string]*Schema

// Reachable returns the definitions reachable from roots through $ref,
// roots included.
func (d Definitions) Reachable(roots ...string) Definitions {
	out := Definitions{}
	var visit func(name string)
	var walk func(s *Schema)
	visit = func(name string) {
		if _, done := out[name]; done {
			return
		}
		s, ok := d[name]
		if !ok {
			return
		}
		out[name] = s
		walk(s)
	}
	walk = func(s *Schema) {
		if s == nil {
			return
		}
		if name := s.RefName(); name != "" {
			visit(name)
		}
		for _, sub := range s.AllOf {
			walk(sub)
		}
		for _, sub := range s.OneOf {
			walk(sub)
		}
		walk(s.Items)
		walk(s.AdditionalProperties)
		for _, p := range s.Properties {
			walk(p)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return out
}

// Resolve follows s's reference, if any, in d.
func (d Definitions) Resolve(s *Schema) *Schema {
	for i := 0; s != nil && i < 8; i++ {
		name := s.RefName()
		if name == "" {
			return s
		}
		s = d[name]
	}
	return s
}

// KubeOpenAPI returns the definitions as kube-openapi's schema type, which
// the published documents (package openapi/document) and server-side
// apply's type converter (k8s.io/apimachinery managedfields) take. The
// conversion goes through JSON: Schema is shaped to encode as that JSON.
func (d Definitions) KubeOpenAPI() (map[string]*spec.Schema, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding OpenAPI definitions: %w", err)
	}
	var out map[string]*spec.Schema
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding OpenAPI definitions as kube-openapi schemas: %w", err)
	}
	return out, nil
}
