package openapi

import (
	"reflect"
	"sort"
	"strings"
	"unicode"
)

// jsonField is one JSON property of a struct as encoding/json resolves it.
type jsonField struct {
	name      string
	tagged    bool
	omitEmpty bool
	quoted    bool // the ",string" option on a scalar
	depth     int
	index     []int
	typ       reflect.Type
	field     reflect.StructField
}

// jsonFields lists the JSON fields of struct type t with encoding/json's
// rules (the ones sigs.k8s.io/json, and so the strict decoder, uses):
// embedded structs without a JSON name are flattened breadth first, and for
// each name the shallowest field wins, a tagged one beating untagged ones
// at its depth; a remaining tie drops the name. The result is in the order
// encoding/json encodes the fields.
func jsonFields(t reflect.Type) []jsonField {
	type queued struct {
		typ   reflect.Type
		index []int
	}
	current := []queued{}
	next := []queued{{typ: t}}
	visited := map[reflect.Type]bool{}
	var all []jsonField
	for depth := 0; len(next) > 0; depth++ {
		current, next = next, current[:0]
		count := map[reflect.Type]int{}
		for _, q := range current {
			count[q.typ]++
		}
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := 0; i < q.typ.NumField(); i++ {
				sf := q.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := append(append([]int(nil), q.index...), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				quoted := false
				if hasOption(opts, "string") {
					switch ft.Kind() {
					case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
						reflect.Float32, reflect.Float64, reflect.String:
						quoted = true
					}
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					tagged := name != ""
					if name == "" {
						name = sf.Name
					}
					all = append(all, jsonField{
						name: name, tagged: tagged, omitEmpty: hasOption(opts, "omitempty"), quoted: quoted,
						depth: depth, index: index, typ: sf.Type, field: sf,
					})
					if count[q.typ] > 1 {
						// The same struct embedded twice at one depth: its
						// fields annihilate each other, as in encoding/json.
						all = append(all, all[len(all)-1])
					}
					continue
				}
				next = append(next, queued{typ: ft, index: index})
			}
		}
	}

	// Sort by name, then depth, then tagged first, then index order.
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		if a.tagged != b.tagged {
			return a.tagged
		}
		return lessIndex(a.index, b.index)
	})
	var out []jsonField
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		if f, ok := dominantField(all[i:j]); ok {
			out = append(out, f)
		}
		i = j
	}
	sort.Slice(out, func(i, j int) bool { return lessIndex(out[i].index, out[j].index) })
	return out
}

// dominantField picks the winner among fields of one name, sorted by
// depth and tagged-first: the first unless the next ties with it.
func dominantField(fs []jsonField) (jsonField, bool) {
	if len(fs) > 1 && fs[0].depth == fs[1].depth && fs[0].tagged == fs[1].tagged {
		return jsonField{}, false
	}
	return fs[0], true
}

func lessIndex(a, b []int) bool {
	for k := 0; k < len(a) && k < len(b); k++ {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// validTagName is encoding/json's isValidTag.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
