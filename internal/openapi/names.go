package openapi

import (
	"reflect"
	"strings"
)

// DefinitionName is the name of a named Go type's definition, built like
// upstream's: the package path with the domain of its first element
// reversed, path separators as dots, then the type name.
//
//	k8s.io/api/core/v1.PodSpec                      io.k8s.api.core.v1.PodSpec
//	k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta
//	github.com/dnsplane/dnsplane/api/core/v1.PodSpec io.dnsplane.api.core.v1.PodSpec
//
// A github.com path is named after its owner (github.com/<owner>/<repo>
// becomes io.<owner>), which for dnsplane gives io.dnsplane.
func DefinitionName(t reflect.Type) string {
	return packageName(t.PkgPath()) + "." + t.Name()
}

func packageName(pkgPath string) string {
	parts := strings.Split(pkgPath, "/")
	if len(parts) >= 3 && parts[0] == "github.com" {
		// github.com/dnsplane/dnsplane/api/... → io.dnsplane.api...
		parts = append([]string{"io", parts[1]}, parts[3:]...)
		return strings.Join(parts, ".")
	}
	if strings.Contains(parts[0], ".") {
		domain := strings.Split(parts[0], ".")
		for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
			domain[i], domain[j] = domain[j], domain[i]
		}
		parts = append(domain, parts[1:]...)
	}
	return strings.Join(parts, ".")
}
