// Package storageversionmigration is the strategy of
// storagemigration.k8s.io/v1 StorageVersionMigrations, which
// kube-controller-manager's storage-version-migrator controller lists
// (GA and on by default in 1.37): cluster-scoped, with a status
// subresource, upstream's validation
// (pkg/registry/storagemigration/storagemigration/strategy.go). dnsplane
// runs no migrator itself; the controller's rewrite of a resource's
// objects is an ordinary read and update here (docs/apiserver.md).
package storageversionmigration

import (
	"k8s.io/kubernetes/pkg/apis/storagemigration"
	svmvalidation "k8s.io/kubernetes/pkg/apis/storagemigration/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the StorageVersionMigration strategy.
func New() upstream.Strategy[storagemigration.StorageVersionMigration] {
	return upstream.Strategy[storagemigration.StorageVersionMigration]{
		Default: rest.Default{Status: true},
		Rules: upstream.Rules[storagemigration.StorageVersionMigration]{
			Validate:             svmvalidation.ValidateStorageVersionMigration,
			ValidateUpdate:       svmvalidation.ValidateStorageVersionMigrationUpdate,
			ValidateStatusUpdate: svmvalidation.ValidateStorageVersionMigrationStatusUpdate,
		},
	}
}
