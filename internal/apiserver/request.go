package apiserver

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// requestInfo is what the URL says about a resource request.
type requestInfo struct {
	Verb        string // get list watch create update patch delete deletecollection
	GV          schema.GroupVersion
	Namespace   string
	Resource    string
	Name        string
	Subresource string

	// Set by the write handlers: the manager a write's managedFields entry
	// names, and whether managedFields were already computed (apply).
	fieldManager string
	applied      bool
}

// namespaceSubresources are the subresources of a namespace itself, which
// the URL layout makes look like resources inside it: the names
// k8s.io/apiserver's RequestInfoFactory takes for them, so that a request
// is routed as the authorizer (internal/authz, with that parser) judged it.
// Upstream exports its set for its own test that keeps the namespace
// storage in step ("so we never drift"); newRegistry refuses a namespace
// subresource declared outside it.
var namespaceSubresources = apirequest.NamespaceSubResourcesForTest

// namespacesResource is the resource whose objects are the namespaces.
var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// parseResourcePath parses /api/v1/… and /apis/<g>/<v>/… resource paths.
// ok=false means the path is not a resource path (discovery, unknown).
func parseResourcePath(r *http.Request) (requestInfo, bool) {
	parts := splitPath(r.URL.Path)
	var info requestInfo
	for _, p := range parts {
		if p == "" {
			// "//" never names a resource; upstream answers 404 too.
			return info, false
		}
	}
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		info.GV = schema.GroupVersion{Version: parts[1]}
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		info.GV = schema.GroupVersion{Group: parts[1], Version: parts[2]}
		parts = parts[3:]
	default:
		return info, false
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		if len(parts) > 2 && !namespaceSubresources.Has(parts[2]) {
			parts = parts[2:]
		}
	}
	info.Resource = parts[0]
	if info.Resource == "namespaces" {
		// /api/v1/namespaces/<name>[/status]: the namespace is the object.
		info.Namespace = ""
	}
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	if len(parts) > 3 {
		return info, false
	}
	info.Verb = verbFor(r, info.Name != "")
	return info, true
}

func verbFor(r *http.Request, named bool) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case isTrue(r.URL.Query().Get("watch")):
			return "watch"
		case named:
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return ""
}

// isTrue parses a boolean query parameter as kube-apiserver does: anything
// but "", "0" and "false" is true.
func isTrue(v string) bool { return v != "" && v != "0" && v != "false" }

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
