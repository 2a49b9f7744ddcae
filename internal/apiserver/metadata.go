package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metadata-only responses: client-go's metadata client and metadata
// informers (k8s.io/client-go/metadata) ask for
// application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1
// then the same as JSON (a get, a watch's events), or
// as=PartialObjectMetadataList (a list), and get each
// object's metadata only, as kube-apiserver's transformResponseObject does
// (k8s.io/apiserver/pkg/endpoints/handlers/response.go); output.go
// negotiates the form.
const (
	partialKind     = "PartialObjectMetadata"
	partialListKind = "PartialObjectMetadataList"
)

// notAcceptable is kube-apiserver's 406 for a transform that does not fit
// the response (errNotAcceptable in response.go).
func notAcceptable(message string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: "NotAcceptable", Message: message}}
}

// internalTypeName is how upstream's %T names a resource's internal Go type
// in its 406 messages: *core.Pod, *apps.DeploymentList.
func internalTypeName(res *Resource, list bool) string {
	pkg := "core"
	if g := res.GVK.Group; g != "" {
		pkg, _, _ = strings.Cut(g, ".")
	}
	name := "*" + pkg + "." + res.GVK.Kind
	if list {
		name += "List"
	}
	return name
}

// asPartial is obj's metadata as a PartialObjectMetadata of meta.k8s.io
// version.
func asPartial(obj any, version string) *metav1.PartialObjectMetadata {
	p := meta.AsPartialObjectMetadata(store.Accessor(obj))
	p.TypeMeta = metav1.TypeMeta{Kind: partialKind, APIVersion: metav1.GroupName + "/" + version}
	return p
}

// partialResponse is the metadata-only form of one object (list == nil) or
// of a list, or kube's 406 when the kind asked for does not fit.
func partialResponse(res *Resource, kind, version string, obj any, list []any, lm metav1.ListMeta) (any, error) {
	if list == nil {
		if kind != partialKind {
			return nil, notAcceptable(fmt.Sprintf("you requested %s, but the requested object is not a list (%s)", partialListKind, internalTypeName(res, false)))
		}
		return asPartial(obj, version), nil
	}
	if kind != partialListKind {
		return nil, notAcceptable(fmt.Sprintf("you requested %s, but the requested object is a list (%s)", partialKind, internalTypeName(res, true)))
	}
	out := &metav1.PartialObjectMetadataList{
		TypeMeta: metav1.TypeMeta{Kind: partialListKind, APIVersion: metav1.GroupName + "/" + version},
		ListMeta: lm,
		Items:    make([]metav1.PartialObjectMetadata, 0, len(list)),
	}
	for _, o := range list {
		out.Items = append(out.Items, *asPartial(o, version))
	}
	return out, nil
}
