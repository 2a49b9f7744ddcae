package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/warning"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// serveResource dispatches a resource request to its verb.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, info requestInfo) {
	if _, ok := legacySubresources[info.Resource]; ok && info.GV.Group == "" {
		if err := s.serveLegacySubresource(w, r, info); err != nil {
			writeErrorNegotiated(w, r, s.log, err)
		}
		return
	}
	res, ok := s.reg.Lookup(info.GV.WithResource(info.Resource))
	if !ok {
		writeErrorNegotiated(w, r, s.log, errNotFoundPath())
		return
	}
	if info.Subresource != "" && !res.HasSubresource(info.Subresource) {
		writeErrorNegotiated(w, r, s.log, errNotFoundPath())
		return
	}
	if !res.Namespaced && info.Namespace != "" {
		writeErrorNegotiated(w, r, s.log, errNotFoundPath())
		return
	}
	if info.Subresource == "" || info.Subresource == "status" {
		// Other subresources serve kinds of their own (Scale, Binding).
		addDeprecationWarning(w, res)
	}
	r = r.WithContext(warning.WithWarningRecorder(r.Context(), &headerWarnings{h: w.Header()}))
	var err error
	if info.Subresource != "" && info.Subresource != "status" && !rest.IsObjectSubresource(res.Strategy, info.Subresource) {
		if err = s.serveSubresource(w, r, res, info); err != nil {
			writeErrorNegotiated(w, r, s.log, err)
		}
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

// storageError maps a storage error for one object to the API error
// kube-apiserver returns for it.
func storageError(res *Resource, name string, err error) error {
	gr := res.GroupResource()
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, storage.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, storage.ErrConflict):
		return errConflict(gr, name)
	case errors.Is(err, storage.ErrTooLarge):
		// etcd's request limit (1.5 MiB) is below the 3 MiB body limit.
		return apierrors.NewRequestEntityTooLargeError("the object is too large to store: etcd accepts at most 1.5 MiB per object")
	case errors.Is(err, storage.ErrCompacted):
		return apierrors.NewResourceExpired(err.Error())
	case errors.Is(err, storage.ErrFutureRevision):
		// Reads wait for their revision first (waitForRevision), so this
		// is unexpected; still a retryable 504 rather than a 500, and
		// without the storage error, which names etcd keys.
		return tooLargeResourceVersion("Too large resource version")
	case errors.Is(err, context.DeadlineExceeded):
		return filters.ErrRequestTimeout()
	case errors.Is(err, context.Canceled):
		// The client went away or the server is stopping; kube's finisher
		// words it the same way with the context's error.
		return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %s", context.Canceled), 0)
	}
	return err
}

func errConflict(gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// parseResourceVersion parses the metadata.resourceVersion of a request
// body; query parameters go through queryResourceVersion.
func parseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
	}
	return n, nil
}

// requireNamespace checks that a create of obj names an existing
// namespace that is not being terminated, with the answers of upstream's
// NamespaceLifecycle admission (k8s.io/apiserver/pkg/admission/plugin/
// namespace/lifecycle): the namespace's 404, or a 403 naming the object
// (its generateName before a name is generated) with a NamespaceTerminating
// cause.
func (s *Server) requireNamespace(ctx context.Context, res *Resource, obj any) error {
	m := accessor(obj)
	ns := m.GetNamespace()
	if !res.Namespaced {
		return nil
	}
	if ns == "" {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	nsRes, _ := s.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	kv, err := s.store.Get(ctx, storageKey(nsRes, "", ns))
	if err != nil {
		return storageError(nsRes, ns, err)
	}
	stored, err := decodeStored(nsRes, kv)
	if err != nil {
		return err
	}
	if stored.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	name := m.GetName()
	if name == "" {
		name = m.GetGenerateName()
	}
	if name == "" {
		name = "Unknown"
	}
	forbidden := apierrors.NewForbidden(res.GroupResource(), name, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	forbidden.ErrStatus.Details.Causes = append(forbidden.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", ns),
		Field:   "metadata.namespace",
	})
	return forbidden
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
