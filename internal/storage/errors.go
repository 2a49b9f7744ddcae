package storage

import (
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors. Every error returned by this package that corresponds to one of them
// wraps it, so callers map them to HTTP statuses with errors.Is and still get a message
// that names the key and revisions involved.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("storage: key not found")
	// ErrExists: a create found the key already present.
	ErrExists = errors.New("storage: key already exists")
	// ErrConflict: a compare-and-swap saw a different mod revision than expected.
	ErrConflict = errors.New("storage: revision conflict")
	// ErrCompacted: the requested revision is older than etcd's compacted history
	// (list at a revision, a continue token, or a watch start). Kubernetes answers 410 Gone / Expired.
	ErrCompacted = errors.New("storage: revision has been compacted")
	// ErrBadContinue: a continue token that this package did not produce (or that does
	// not fit the request). Kubernetes answers 400 Bad Request.
	ErrBadContinue = errors.New("storage: invalid continue token")
	// ErrFutureRevision: a read at a revision etcd has not reached yet. Kubernetes answers
	// 504 "Too large resource version".
	ErrFutureRevision = errors.New("storage: revision is in the future")
	// ErrTooLarge: etcd refused the value because the request exceeds its size limit
	// (--max-request-bytes, 1.5 MiB by default). Kubernetes answers 413.
	ErrTooLarge = errors.New("storage: value too large")
	// ErrWatchTooSlow ends a watch whose consumer fell too far behind. Errors carrying it
	// also match ErrCompacted, because the remedy is the same: relist, then watch again.
	ErrWatchTooSlow = errors.New("storage: watch consumer fell too far behind")
)

// translate turns etcd client errors into this package's sentinels where one applies.
// The etcd text is kept because it sometimes says more (e.g. the compacted revision),
// and the etcd error itself stays in the chain too: the default case passes etcd
// errors through unchanged, so wrapping hides nothing callers could not already see.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w (%w)", ErrCompacted, err)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%w (%w)", ErrFutureRevision, err)
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		return fmt.Errorf("%w (%w)", ErrTooLarge, err)
	case errors.Is(err, rpctypes.ErrNoSpace):
		// Also ResourceExhausted, but it is the database quota, not this request.
		return err
	case status.Code(err) == codes.ResourceExhausted:
		// A request above the server's gRPC message limit (--max-request-bytes plus
		// some overhead) is refused by gRPC itself before etcd sees it.
		return fmt.Errorf("%w (%w)", ErrTooLarge, err)
	default:
		return err
	}
}
