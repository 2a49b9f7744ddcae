// Package volumeattachment is the strategy of storage.k8s.io/v1
// VolumeAttachments: cluster-scoped, with a status subresource, upstream's
// defaulting and validation (pkg/registry/storage/volumeattachment/strategy.go,
// whose status strategy validates as the main resource does). The error
// codes upstream drops from /status writes when MutableCSINodeAllocatableCount
// is off are kept: the gate is GA.
package volumeattachment

import (
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// New returns the VolumeAttachment strategy.
func New() upstream.Strategy[storage.VolumeAttachment] {
	return upstream.Strategy[storage.VolumeAttachment]{
		Default: rest.Default{Status: true, ReturnDeletedObject: true},
		Rules: upstream.Rules[storage.VolumeAttachment]{
			Validate:       storagevalidation.ValidateVolumeAttachment,
			ValidateUpdate: storagevalidation.ValidateVolumeAttachmentUpdate,
		},
	}
}
