package openapi

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddList adds the definition of the list of a kind added with AddKind:
// <item definition>List, an object with apiVersion, kind, metadata (a
// ListMeta) and items, marked with listGVK. dnsplane's wrapper kinds have
// no Go list types; the server writes lists of exactly this shape.
func (g *Generator) AddList(listGVK schema.GroupVersionKind, itemName string) (string, error) {
	meta, err := g.AddType(reflect.TypeFor[metav1.ListMeta]())
	if err != nil {
		return "", err
	}
	name := itemName + "List"
	if _, ok := g.defs[name]; !ok {
		metaRef := g.Ref(meta)
		if g.version == V3 {
			metaRef = &Schema{AllOf: []*Schema{metaRef}}
		}
		metaRef.Description = "Standard list metadata."
		g.defs[name] = &Schema{
			Description: listGVK.Kind + " is a list of " + itemName + ".",
			Type:        "object",
			Properties: map[string]*Schema{
				"apiVersion": {Type: "string", Description: "APIVersion defines the versioned schema of this representation of an object."},
				"kind":       {Type: "string", Description: "Kind is a string value representing the REST resource this object represents."},
				"metadata":   metaRef,
				"items":      {Type: "array", Items: g.Ref(itemName), ListType: "atomic", Description: "List of " + itemName + "."},
			},
		}
	}
	def := g.defs[name]
	def.GroupVersionKind = append(def.GroupVersionKind, GroupVersionKind{Group: listGVK.Group, Kind: listGVK.Kind, Version: listGVK.Version})
	return name, nil
}
