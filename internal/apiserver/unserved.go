package apiserver

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// unservedDoc is where the user guide explains what is not served.
const unservedDoc = "docs/apiserver.md#what-is-not-served"

// anyResource in unservedEntry.resource stands for every resource of the
// group: the whole API group is not served.
const anyResource = "*"

// unservedEntry is an API kube-apiserver serves and dnsplane does not, and
// why. kubectl reaches these with its own commands (logs, exec,
// port-forward, auth can-i, create token, drain), so a bare "the server
// could not find the requested resource" would leave the user guessing.
type unservedEntry struct {
	group       string
	resource    string // a plural, or anyResource
	subresource string // "" with anyResource
	why         string
}

// unservedAPIs are answered with errUnserved. A subresource or group that
// dnsplane comes to serve must leave this table:
// TestUnservedIsNotServed fails while both have it.
var unservedAPIs = []unservedEntry{
	{"", "pods", "portforward", "there are no containers to forward ports to"},
	{"", "pods", "proxy", "no pod runs, so there is nothing to proxy to"},
	{"", "nodes", "proxy", "there is no kubelet to proxy to"},
	{"", "services", "proxy", "no pod runs behind a service, so there is nothing to proxy to"},
}

// unservedFor returns the entry of unservedAPIs a request path names, and
// what it names: "pods/log", "selfsubjectaccessreviews.authorization.k8s.io".
// Any version matches, and anything after the subresource (a proxy's path).
func unservedFor(path string) (unservedEntry, string, bool) {
	parts := splitPath(path)
	var group string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 2 && parts[0] == "apis":
		group = parts[1]
		parts = parts[min(3, len(parts)):]
	default:
		return unservedEntry{}, "", false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	for _, e := range unservedAPIs {
		if e.group != group {
			continue
		}
		if e.resource == anyResource {
			if len(parts) == 0 {
				return e, "the API group " + group, true
			}
			return e, schema.GroupResource{Group: group, Resource: parts[0]}.String(), true
		}
		if len(parts) >= 3 && parts[0] == e.resource && parts[2] == e.subresource {
			return e, schema.GroupResource{Group: group, Resource: e.resource + "/" + e.subresource}.String(), true
		}
	}
	return unservedEntry{}, "", false
}

// errUnserved answers as kube-apiserver does for an API it does not have,
// with a message saying what dnsplane does not serve and why. kube-apiserver
// has no route for such a path: go-restful's router finds none and
// k8s.io/apiserver's serviceErrorHandler (pkg/server/handler.go) writes
// NewGenericServerResponse(404), reason NotFound, "the server could not find
// the requested resource"; a path in an API group it does not serve falls
// through to the not-found handler (k8s.io/apiserver/pkg/util/notfoundhandler,
// wired in k8s.io/kubernetes's cmd/kube-apiserver/app/server.go), a plain 404
// client-go reads as the same NotFound. Code and reason stay kube's, so
// clients that test for NotFound behave as against a cluster without the API;
// kubectl prints the message: "Error from server (NotFound): dnsplane does
// not serve …".
func errUnserved(e unservedEntry, what string) *apierrors.StatusError {
	err := errNotFoundPath()
	err.ErrStatus.Message = fmt.Sprintf("dnsplane does not serve %s: %s (%s)", what, e.why, unservedDoc)
	return err
}
