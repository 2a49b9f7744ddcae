package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/warning"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// serveResource dispatches a resource request to its verb.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, info requestInfo) {
	if a, ok := s.reg.aliases[info.GV.WithResource(info.Resource)]; ok {
		if err := s.serveAlias(w, r, a, info); err != nil {
			writeErrorNegotiated(w, r, s.log, err)
		}
		return
	}
	res, ok := s.reg.Lookup(info.GV.WithResource(info.Resource))
	if !ok {
		writeErrorNegotiated(w, r, s.log, errNotFoundPath())
		return
	}
	var sub rest.Subresource
	if info.Subresource != "" {
		if sub, ok = res.subresource(info.Subresource); !ok {
			writeErrorNegotiated(w, r, s.log, errNotFoundPath())
			return
		}
	}
	if !res.Namespaced && info.Namespace != "" {
		writeErrorNegotiated(w, r, s.log, errNotFoundPath())
		return
	}
	if info.Subresource == "" || sub.Update != nil {
		// Other subresources serve kinds of their own (Scale, Binding).
		addDeprecationWarning(w, res)
	}
	r = r.WithContext(warning.WithWarningRecorder(r.Context(), &headerWarnings{h: w.Header()}))
	var err error
	if info.Subresource != "" && sub.Update == nil {
		if err = s.serveSubresource(w, r, res, sub, info); err != nil {
			writeErrorNegotiated(w, r, s.log, err)
		}
		return
	}
	if info.Subresource != "" && info.Verb != "" && !objectSubresourceAllows(sub, info.Verb) {
		// The parent read and written whole (status, finalize, approval):
		// the main resource's handlers serve the verbs it declares.
		writeErrorNegotiated(w, r, s.log, errMethodNotAllowed(info.Verb, res.GroupResource()))
		return
	}
	switch info.Verb {
	case "get":
		err = s.get(w, r, res, info)
	case "list":
		err = s.list(w, r, res, info)
	case "watch":
		err = s.watch(w, r, res, info)
	case "create":
		if info.Name != "" {
			err = errMethodNotAllowed("create", res.GroupResource())
			break
		}
		err = s.create(w, r, res, info)
	case "update":
		err = s.update(w, r, res, info)
	case "patch":
		err = s.patch(w, r, res, info)
	case "delete":
		err = s.delete(w, r, res, info)
	case "deletecollection":
		err = s.deleteCollection(w, r, res, info)
	default:
		err = errMethodNotAllowed(r.Method, res.GroupResource())
	}
	if err != nil {
		writeErrorNegotiated(w, r, s.log, err)
	}
}

// isDryRun reports dryRun=All; any other value is a 400, as upstream.
func isDryRun(r *http.Request) (bool, error) {
	values := r.URL.Query()["dryRun"]
	for _, v := range values {
		if v != "All" {
			return false, apierrors.NewBadRequest(fmt.Sprintf("Invalid dryRun value %q: supported values are \"All\"", v))
		}
	}
	return len(values) > 0, nil
}
