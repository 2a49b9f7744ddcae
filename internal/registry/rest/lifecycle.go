package rest

import "context"

// GracefulDeleter is a Strategy whose objects are not removed at once when
// deleted: the server marks them (metadata.deletionTimestamp and
// deletionGracePeriodSeconds) and something else (a pod's kubelet) finishes
// the delete with a grace period of 0. It is upstream's
// RESTGracefulDeleteStrategy (k8s.io/apiserver/pkg/registry/rest/delete.go);
// the generic part of BeforeDelete (shortening a pending grace period,
// finalizers) is in internal/apiserver.
type GracefulDeleter interface {
	// GracePeriod returns the grace period in seconds for deleting obj,
	// given the one the request asked for (nil when it named none). 0
	// deletes at once.
	GracePeriod(ctx context.Context, obj any, requested *int64) int64
}
