package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"
)

// Protobuf responses (docs/apiserver.md, "Content types"). kube-apiserver
// answers application/vnd.kubernetes.protobuf for every built-in kind, and
// client-go's clients of built-in kinds (kube-controller-manager's and
// kube-scheduler's informers among them) ask for it first. dnsplane answers
// it for the kinds whose Go type is upstream's own: the k8s.io/api types
// carry the generated protobuf marshalling and are registered in client-go's
// scheme. dnsplane's types are not: the pod template carriers add
// spec.dnsParams, which upstream's protobuf schema has no field for, and DNS
// is served as a CRD is. Those answer JSON, as kube-apiserver answers a
// custom resource's protobuf request (its handler's StandardSerializers are
// JSON and YAML only). The choice is made from the Go type alone, so a kind
// added with a k8s.io/api type answers protobuf without being listed.

// protobufStreamMediaType is the Content-Type of a protobuf watch, as
// kube-apiserver's watch handler names it (serveWatchHandler).
const protobufStreamMediaType = mediaProtobuf + ";stream=watch"

// protobufEncoder writes the k8s\x00 envelope of one object; the streaming
// collections option writes a list item by item instead of marshalling it
// whole first, as kube-apiserver does with StreamingCollectionEncodingToProtobuf.
// Stateless, so one value serves every request.
var protobufEncoder = protobuf.NewSerializerWithOptions(scheme.Scheme, scheme.Scheme, protobuf.SerializerOptions{StreamingCollectionsEncoding: true})

// protobufRawEncoder encodes a watch stream's frames: the bare WatchEvent
// message, no envelope, as the StreamSerializer of kube's protobuf codec.
var protobufRawEncoder = protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)

// upstreamProtobuf reports whether obj is of an upstream Go type registered
// in client-go's scheme as kind gvk and marshals itself as protobuf. The
// scheme check is what matters: dnsplane's types embed metav1.TypeMeta,
// whose generated Marshal is promoted to them, so they satisfy the
// marshalling interface yet would be encoded as an empty TypeMeta.
func upstreamProtobuf(obj any, gvk schema.GroupVersionKind) bool {
	ro, ok := obj.(runtime.Object)
	if !ok {
		return false
	}
	if _, ok := obj.(runtime.ProtobufMarshaller); !ok {
		return false
	}
	kinds, _, err := scheme.Scheme.ObjectKinds(ro)
	if err != nil {
		return false
	}
	for _, k := range kinds {
		if k == gvk {
			return true
		}
	}
	return false
}

// encodeProtobuf writes obj's envelope to w with a pooled buffer, as
// kube-apiserver encodes with runtime.AllocatorPool: without one the
// serializer allocates a fresh buffer per object, per list item when
// streaming a list.
func encodeProtobuf(obj runtime.Object, w io.Writer) error {
	alloc := runtime.AllocatorPool.Get().(*runtime.Allocator)
	defer runtime.AllocatorPool.Put(alloc)
	return protobufEncoder.EncodeWithAllocator(obj, w, alloc)
}

// servesProtobuf reports whether res's objects answer protobuf.
func servesProtobuf(res *Resource) bool { return upstreamProtobuf(res.New(), res.GVK) }

// protobufList is the typed upstream list (e.g. *corev1.ConfigMapList) of
// items, which the protobuf schema needs: listBody's []any has none.
func protobufList(res *Resource, items []any, lm metav1.ListMeta) (runtime.Object, error) {
	listGVK := res.GVK.GroupVersion().WithKind(res.GVK.Kind + "List")
	list, err := scheme.Scheme.New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("protobuf list of %s: %w", res.GVK, err)
	}
	objs := make([]runtime.Object, 0, len(items))
	for _, it := range items {
		o, ok := it.(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("protobuf list of %s: item %T is not an object", res.GVK, it)
		}
		objs = append(objs, o)
	}
	if err := meta.SetList(list, objs); err != nil {
		return nil, fmt.Errorf("protobuf list of %s: %w", res.GVK, err)
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return nil, fmt.Errorf("protobuf list of %s: %w", res.GVK, err)
	}
	la.SetResourceVersion(lm.ResourceVersion)
	la.SetContinue(lm.Continue)
	la.SetRemainingItemCount(lm.RemainingItemCount)
	list.GetObjectKind().SetGroupVersionKind(listGVK)
	return list, nil
}

// writeProtobuf writes obj as the protobuf body of a response. obj must
// pass upstreamProtobuf and carry its kind in its TypeMeta: the envelope is
// built from it. A single object is encoded before the header is written,
// so a failure is still a 500; a list streams item by item, so it cannot be.
func writeProtobuf(w http.ResponseWriter, code int, obj runtime.Object) error {
	if meta.IsListType(obj) {
		w.Header().Set("Content-Type", mediaProtobuf)
		w.WriteHeader(code)
		// Past the header an error can no longer be answered (a Status
		// would be appended to half a list); it is the client going away.
		_ = encodeProtobuf(obj, w)
		return nil
	}
	var buf bytes.Buffer
	if err := encodeProtobuf(obj, &buf); err != nil {
		return fmt.Errorf("encoding a %s as protobuf: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
	}
	w.Header().Set("Content-Type", mediaProtobuf)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// protobufEvents writes watch events as kube-apiserver's protobuf watch:
// each a metav1.WatchEvent whose object is the enveloped protobuf of the
// object, framed by a 4-byte big-endian length (protobuf.LengthDelimitedFramer).
type protobufEvents struct {
	enc streaming.Encoder
	buf bytes.Buffer
}

func newProtobufEvents(w io.Writer) *protobufEvents {
	return &protobufEvents{enc: streaming.NewEncoder(protobuf.LengthDelimitedFramer.NewFrameWriter(w), protobufRawEncoder)}
}

func (p *protobufEvents) send(typ string, obj runtime.Object) error {
	p.buf.Reset()
	if err := encodeProtobuf(obj, &p.buf); err != nil {
		return fmt.Errorf("encoding a watch event as protobuf: %w", err)
	}
	return p.enc.Encode(&metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: p.buf.Bytes()}})
}
