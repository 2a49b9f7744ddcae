package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Limits on the work one patch may cause, each checked before the step it
// protects: the JSON patch limits before the operations run.
const (
	// maxJSONPatchOperations is kube-apiserver's limit on the operations
	// of one JSON patch (kubernetes#74000): 413 over it.
	maxJSONPatchOperations = 10000
	// maxJSONPatchCopyBytes bounds what the "copy" operations of one JSON
	// patch may add up to. kube-apiserver sets json-patch's
	// AccumulatedCopySizeLimit to its request body limit
	// (JSONPatchMaxCopyBytes, 3 MiB); without it, copying a value onto
	// itself doubles the document with every operation.
	maxJSONPatchCopyBytes = MaxRequestBodyBytes
)

// errJSONPatchFailed is kube-apiserver's answer to a JSON patch that
// fails to apply, which is how a patch over the copy limit fails: a
// generic 422 Invalid, "the server rejected our request due to an error
// in our request", with empty details. Upstream's patch.go hands
// json-patch's error to NewGenericServerResponse as the server message,
// which that constructor drops; so does this.
func errJSONPatchFailed(err error) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
}
