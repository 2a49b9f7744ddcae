// Package storageclass is the strategy of storage.k8s.io/v1 StorageClasses:
// cluster-scoped, upstream's defaulting and validation
// (pkg/registry/storage/storageclass/strategy.go, which validates the whole
// class again on update before its update rules).
package storageclass

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the StorageClass strategy.
func New() upstream.Strategy[storage.StorageClass] {
	return upstream.Strategy[storage.StorageClass]{Default: rest.Default{ReturnDeletedObject: true}, Rules: upstream.Rules[storage.StorageClass]{
		Validate: storagevalidation.ValidateStorageClass,
		ValidateUpdate: func(sc, old *storage.StorageClass) field.ErrorList {
			return append(storagevalidation.ValidateStorageClass(sc), storagevalidation.ValidateStorageClassUpdate(sc, old)...)
		},
	}}
}
