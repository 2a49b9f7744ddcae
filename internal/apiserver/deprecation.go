package apiserver

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
)

// servedMajor and servedMinor are the Kubernetes release whose API this
// server serves (k8s.io/api and k8s.io/kubernetes in go.mod): a kind
// deprecated in it or before gets kube-apiserver's deprecation warning.
const servedMajor, servedMinor = 1, 37

// deprecationWarning is the Warning kube-apiserver adds to every response
// on a deprecated kind's routes, whatever the verb or outcome ("v1
// Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1
// EndpointSlice"), worked out as its installer does: from the Go type's
// API lifecycle methods (k8s.io/api's prerelease-lifecycle code) with
// k8s.io/apiserver's deprecation package. "" for every other kind.
func deprecationWarning(res *Resource) string {
	obj, ok := res.New().(runtime.Object)
	if !ok {
		return ""
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GVK)
	if !deprecation.IsDeprecated(obj, servedMajor, servedMinor) {
		return ""
	}
	return deprecation.WarningMessage(obj)
}

// addDeprecationWarning sets res's deprecation Warning header, if it has
// one, before anything else writes: warnings the request itself raises
// (field validation) follow it, as in kube-apiserver.
func addDeprecationWarning(w http.ResponseWriter, res *Resource) {
	if text := deprecationWarning(res); text != "" {
		var rec warningRecorder
		rec.add(text)
		rec.write(w.Header())
	}
}
