package openapi

import (
	"reflect"
	"strings"
)

// patchExtensions sets the patch and list-type extensions of a property
// from its struct field's tags. See the package documentation for how the
// list type is derived.
func patchExtensions(s *Schema, sf reflect.StructField) {
	strategy := sf.Tag.Get("patchStrategy")
	key := sf.Tag.Get("patchMergeKey")
	s.PatchStrategy = strategy
	s.PatchMergeKey = key
	if s.Type != "array" {
		return
	}
	s.ListType, s.ListMapKeys = listType(strategy, key)
}

// listType derives x-kubernetes-list-type (and -list-map-keys) from the
// patch tags: merge with a key is a map on that key, merge without one a
// set, anything else atomic.
func listType(strategy, key string) (string, []string) {
	merge := false
	for _, s := range strings.Split(strategy, ",") {
		if s == "merge" {
			merge = true
		}
	}
	switch {
	case merge && key != "":
		return "map", []string{key}
	case merge:
		return "set", nil
	default:
		return "atomic", nil
	}
}
