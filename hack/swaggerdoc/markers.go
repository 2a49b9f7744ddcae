package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// markerPrefixes are the +kubebuilder markers carried into the generated
// code: internal/openapi turns them into the schema's enum, default and
// bounds, so the API server's OpenAPI (kubectl explain) and the CRD
// `dnsplane operator --print-crd` prints state them.
var markerPrefixes = []string{
	"+kubebuilder:validation:Enum=",
	"+kubebuilder:validation:Minimum=",
	"+kubebuilder:validation:Maximum=",
	"+kubebuilder:validation:MinItems=",
	"+kubebuilder:validation:MaxItems=",
	"+kubebuilder:default=",
}

// typeMarkers are one struct's markers by JSON field name.
type typeMarkers struct {
	typ    string
	fields map[string][]string
}

// structMarkers reads the markers of the fields of f's struct types.
func structMarkers(fset *token.FileSet, f *ast.File) ([]typeMarkers, error) {
	var out []typeMarkers
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			tm := typeMarkers{typ: ts.Name.Name, fields: map[string][]string{}}
			for _, fl := range st.Fields.List {
				if fl.Doc == nil || fl.Tag == nil || len(fl.Names) != 1 {
					continue
				}
				tag, err := strconv.Unquote(fl.Tag.Value)
				if err != nil {
					return nil, fmt.Errorf("%s: field tag: %w", fset.Position(fl.Pos()), err)
				}
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if name == "" || name == "-" {
					continue
				}
				for _, c := range fl.Doc.List {
					line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
					for _, p := range markerPrefixes {
						if strings.HasPrefix(line, p) {
							tm.fields[name] = append(tm.fields[name], strings.TrimPrefix(line, "+kubebuilder:"))
						}
					}
				}
			}
			if len(tm.fields) > 0 {
				out = append(out, tm)
			}
		}
	}
	return out, nil
}

// writeMarkers writes a KubebuilderMarkers method per struct.
func writeMarkers(buf *bytes.Buffer, tms []typeMarkers) {
	sort.Slice(tms, func(i, j int) bool { return tms[i].typ < tms[j].typ })
	for _, tm := range tms {
		fmt.Fprintf(buf, "\n// KubebuilderMarkers are the +kubebuilder markers of %s's fields by JSON name (internal/openapi).\n", tm.typ)
		fmt.Fprintf(buf, "func (%s) KubebuilderMarkers() map[string][]string {\n\treturn map[string][]string{\n", tm.typ)
		names := make([]string, 0, len(tm.fields))
		for n := range tm.fields {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			quoted := make([]string, len(tm.fields[n]))
			for i, m := range tm.fields[n] {
				quoted[i] = strconv.Quote(m)
			}
			fmt.Fprintf(buf, "\t\t%q: {%s},\n", n, strings.Join(quoted, ", "))
		}
		buf.WriteString("\t}\n}\n")
	}
}
