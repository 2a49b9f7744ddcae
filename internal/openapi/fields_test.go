package openapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"testing"
)

type inner struct {
	A string `json:"a"`
	B string `json:"b,omitempty"`
	C string
}

type shadow struct {
	inner `json:",inline"`
	B     int `json:"b"` // shallower: wins over inner.B
}

type tieL struct{ X string }
type tieR struct{ X string }
type tie struct {
	tieL
	tieR
}

type tieTagged struct {
	tieL
	R struct {
		X string `json:"X"`
	} `json:",inline"` // a named (unexported-type) field: not flattened
}

type taggedWins struct {
	L1 struct{ X string }
	tieL
	Tagged
}

type Tagged struct {
	Y string `json:"X"`
}

type skip struct {
	Dash    string `json:"-"`
	DashKey string `json:"-,"` //nolint:staticcheck // SA5008: deliberate, "-," names the field "-"
	lower   string //nolint:unused
	Bad     string `json:"bad name!\\"` //nolint:staticcheck // SA5008: deliberate, an invalid name falls back to the Go name
	Ptr     *inner `json:"ptr,omitempty"`
	Quoted  int    `json:"q,string"`
}

type embedPtr struct {
	*Tagged
	D string `json:"d"`
}

func TestJSONFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want []string
	}{
		{"plain", inner{}, []string{"a", "b", "C"}},
		{"shallower wins", shadow{}, []string{"a", "C", "b"}},
		{"untagged tie drops the name", tie{}, nil},
		{"tagged beats untagged at one depth", taggedWins{}, []string{"L1", "X"}},
		{"named field with inline tag is not flattened", tieTagged{}, []string{"X", "R"}},
		{"dash, unexported, bad tag, string option", skip{}, []string{"-", "Bad", "ptr", "q"}},
		{"embedded pointer", embedPtr{}, []string{"X", "d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range jsonFields(reflect.TypeOf(tc.v)) {
				got = append(got, f.name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("fields %v, want %v", got, tc.want)
			}
			// encoding/json agrees: marshal a value with every field set
			// and compare the keys.
			keys := encodedKeys(t, tc.v)
			sort.Strings(keys)
			want := slices.Clone(tc.want)
			sort.Strings(want)
			if !slices.Equal(keys, want) {
				t.Errorf("encoding/json keys %v, fields %v", keys, want)
			}
		})
	}
}

// encodedKeys are the top-level keys encoding/json writes for v with every
// settable field filled.
func encodedKeys(t *testing.T, v any) []string {
	t.Helper()
	p := reflect.New(reflect.TypeOf(v))
	fill(p.Elem())
	b, err := json.Marshal(p.Interface())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int:
		v.SetInt(1)
	case reflect.Pointer:
		if v.CanSet() {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() || v.Type().Field(i).Anonymous {
				if f.CanSet() {
					fill(f)
				} else if f.Kind() == reflect.Struct {
					fillUnexported(f)
				}
			}
		}
	}
}

// fillUnexported fills the exported fields of an embedded struct of an
// unexported type.
func fillUnexported(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.CanSet() {
			fill(f)
		}
	}
}
