package store

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// resourceVersionRetrySeconds is the Retry-After kube-apiserver suggests with
// "Too large resource version" (resourceVersionTooHighRetrySeconds).
const resourceVersionRetrySeconds = 1

// Error maps a storage error for one object of r to the API error
// kube-apiserver returns for it.
func Error(r *api.Resource, name string, err error) error {
	gr := r.GroupResource()
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, storage.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, storage.ErrConflict):
		return Conflict(gr, name)
	case errors.Is(err, storage.ErrTooLarge):
		// etcd's request limit (1.5 MiB) is below the 3 MiB body limit.
		return apierrors.NewRequestEntityTooLargeError("the object is too large to store: etcd accepts at most 1.5 MiB per object")
	case errors.Is(err, storage.ErrCompacted):
		return apierrors.NewResourceExpired(err.Error())
	case errors.Is(err, storage.ErrFutureRevision):
		// Reads wait for their revision first, so this is unexpected;
		// still a retryable 504 rather than a 500, and without the storage
		// error, which names etcd keys.
		return TooLargeResourceVersion("Too large resource version")
	case errors.Is(err, context.DeadlineExceeded):
		return filters.ErrRequestTimeout()
	case errors.Is(err, context.Canceled):
		// The client went away or the server is stopping; kube's finisher
		// words it the same way with the context's error.
		return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %s", context.Canceled), 0)
	}
	return err
}

// Conflict is kube-apiserver's 409 for a write over a stale object.
func Conflict(gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// TooLargeResourceVersion is kube-apiserver's answer for a read at a
// resourceVersion storage has not reached: 504 Timeout with the
// ResourceVersionTooLarge cause, which client-go's reflector recognises (it
// then lists again from the latest revision), and a Retry-After.
func TooLargeResourceVersion(msg string) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(msg, resourceVersionRetrySeconds)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// Invalid is the 422 for field errors, "<Kind> \"<name>\" is invalid: …".
// The kind is the one the objects are stored as: kube-apiserver names the
// kind its strategy's scheme reports first for the internal type, so an
// events.k8s.io/v1 Event, which shares core's internal Event and storage,
// is refused as `Event "x" is invalid` (group ""), while not-found and
// conflict errors name the request's events.events.k8s.io.
func Invalid(r *api.Resource, name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(r.StoredAs().GroupKind(), name, errs)
}
