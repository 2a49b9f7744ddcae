package openapi

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// markerer is a type that lists its fields' +kubebuilder markers (the
// code hack/swaggerdoc generates beside SwaggerDoc).
type markerer interface{ KubebuilderMarkers() map[string][]string }

// kubebuilderMarkers are struct t's markers by JSON field name, nil when
// it declares none.
func kubebuilderMarkers(t reflect.Type) map[string][]string {
	m, ok := reflect.New(t).Interface().(markerer)
	if !ok {
		return nil
	}
	return m.KubebuilderMarkers()
}

// applyMarkers sets the enum, default and bounds of field schema p, of a
// field of Go type t, from its markers ("validation:Enum=A;B",
// "default=A", "validation:Minimum=1", …; values in controller-gen's
// syntax: {} an empty object, {{k: v}} a list of one object).
func applyMarkers(p *Schema, markers []string, t reflect.Type) error {
	for _, m := range markers {
		key, val, _ := strings.Cut(m, "=")
		switch key {
		case "validation:Enum":
			for _, v := range strings.Split(val, ";") {
				e, err := markerValue(v, t)
				if err != nil {
					return fmt.Errorf("%s: %w", m, err)
				}
				p.Enum = append(p.Enum, e)
			}
		case "default":
			d, err := markerValue(val, t)
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			p.Default = d
		case "validation:Minimum", "validation:Maximum":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			if key == "validation:Minimum" {
				p.Minimum = &f
			} else {
				p.Maximum = &f
			}
		case "validation:MinItems", "validation:MaxItems":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			if key == "validation:MinItems" {
				p.MinItems = &n
			} else {
				p.MaxItems = &n
			}
		default:
			return fmt.Errorf("marker %q is not supported", m)
		}
	}
	return nil
}

// markerValue parses a marker's value as a value of Go type t.
func markerValue(s string, t reflect.Type) (any, error) {
	s = strings.TrimSpace(s)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		if strings.HasPrefix(s, `"`) {
			return strconv.Unquote(s)
		}
		return s, nil
	case reflect.Bool:
		return strconv.ParseBool(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.ParseInt(s, 10, 64)
	case reflect.Slice:
		parts, err := braced(s)
		if err != nil {
			return nil, err
		}
		out := []any{}
		for _, e := range parts {
			v, err := markerValue(e, t.Elem())
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case reflect.Struct:
		parts, err := braced(s)
		if err != nil {
			return nil, err
		}
		fields := map[string]reflect.Type{}
		for _, f := range jsonFields(t) {
			fields[f.name] = f.typ
		}
		out := map[string]any{}
		for _, kv := range parts {
			k, v, ok := strings.Cut(kv, ":")
			k = strings.TrimSpace(k)
			ft, known := fields[k]
			if !ok || !known {
				return nil, fmt.Errorf("%q: want FIELD: VALUE with a field of %v", kv, t)
			}
			pv, err := markerValue(v, ft)
			if err != nil {
				return nil, err
			}
			out[k] = pv
		}
		return out, nil
	}
	return nil, fmt.Errorf("no marker values for %v", t)
}

// braced splits "{a, {b, c}}" into "a" and "{b, c}"; "{}" has no parts.
func braced(s string) ([]string, error) {
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, fmt.Errorf("%q: want {…}", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return nil, nil
	}
	var parts []string
	depth, start := 0, 0
	for i, r := range inner {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(inner[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%q: unbalanced braces", s)
	}
	return append(parts, strings.TrimSpace(inner[start:])), nil
}
