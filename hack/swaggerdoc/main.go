// Command swaggerdoc writes types_swagger_doc_generated.go in each API
// package directory it is given: a SwaggerDoc method per struct type, the
// map of descriptions internal/openapi serves for the type and its JSON
// fields (what kubectl explain prints). hack/update-codegen.sh runs it.
//
// The descriptions are the Go doc comments, read by k8s.io/apimachinery's
// runtime.ParseDocumentationFrom and written by runtime.WriteSwaggerDocFunc,
// the two calls behind k8s.io/kubernetes's cmd/genswaggertypedocs, which
// writes the types_swagger_doc_generated.go files of k8s.io/api. So the
// rules are upstream's: the text after a line "---" is for Go readers only,
// and lines starting with "+" (generator tags) or a one-line TODO are left
// out.
//
// One addition: a const group whose doc comment has the tag
//
//	+dnsplane:swaggerdoc:field=<Type>.<jsonField>
//
// describes that field of that struct: the group's comment (up to "---"),
// then "Possible enum values:" and one line per constant, in the format of
// kube-openapi's enum descriptions (k8s.io/kube-openapi/pkg/generators,
// enum.go) but in declaration order. The field may be one the struct
// inherits from an embedded upstream struct: internal/openapi asks the
// outer struct first, so this replaces upstream's description there. That
// is how pod.spec.dnsPolicy lists dnsplane's six policies (api/core/v1).
//
// Usage: go run ./hack/swaggerdoc DIR...
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: swaggerdoc DIR...")
		os.Exit(2)
	}
	for _, dir := range os.Args[1:] {
		if err := writeDir(dir); err != nil {
			fmt.Fprintf(os.Stderr, "swaggerdoc: %v\n", err)
			os.Exit(1)
		}
	}
}
