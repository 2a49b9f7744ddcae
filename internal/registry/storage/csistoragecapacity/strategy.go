// Package csistoragecapacity is the strategy of storage.k8s.io/v1
// CSIStorageCapacities: namespaced, upstream's defaulting and validation
// with the options its strategy computes
// (pkg/registry/storage/csistoragecapacity/strategy.go).
package csistoragecapacity

import (
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the CSIStorageCapacity strategy.
func New() upstream.Strategy[storage.CSIStorageCapacity] {
	return upstream.Strategy[storage.CSIStorageCapacity]{
		Default: rest.Default{Namespaced: true},
		Rules: upstream.Rules[storage.CSIStorageCapacity]{
			Validate: func(c *storage.CSIStorageCapacity) field.ErrorList {
				return storagevalidation.ValidateCSIStorageCapacity(c, storagevalidation.CSIStorageCapacityValidateOptions{})
			},
			ValidateUpdate: func(c, old *storage.CSIStorageCapacity) field.ErrorList {
				// An object stored before label values in selectors were
				// checked may keep its invalid ones.
				opts := storagevalidation.CSIStorageCapacityValidateOptions{AllowInvalidLabelValueInSelector: invalidSelector(old)}
				return append(storagevalidation.ValidateCSIStorageCapacity(c, opts), storagevalidation.ValidateCSIStorageCapacityUpdate(c, old)...)
			},
		},
	}
}

// invalidSelector reports whether c's nodeTopology has a label value the
// strict selector rules refuse.
func invalidSelector(c *storage.CSIStorageCapacity) bool {
	return len(metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
}
