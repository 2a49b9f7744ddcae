package apiserver

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/dnsplane/dnsplane/internal/negotiation"
)

// output is the form of a response body, negotiated from the Accept header.
type output struct {
	protobuf bool   // application/vnd.kubernetes.protobuf; JSON otherwise
	as       string // "" for the objects themselves, tableKind, partialKind or partialListKind
	version  string // the meta.k8s.io version of as
}

const tableKind = "Table"

// negotiateOutput picks the form of a resource's response as kube-apiserver
// does (NegotiateOutputMediaType with the resource's endpoint restrictions,
// RequestScope.AllowsMediaTypeTransform): the first range of the Accept
// header the server can answer. objectProtobuf says whether the resource's
// objects themselves answer protobuf (servesProtobuf); a protobuf range for
// objects that do not is passed over, so a client-go client's
// "application/vnd.kubernetes.protobuf,application/json" gets JSON. A
// header that admits nothing gets JSON, as it always has here
// (kube-apiserver answers 406).
func negotiateOutput(accept string, objectProtobuf bool) output {
	var out output
	negotiation.First(accept, func(r negotiation.Range) bool {
		var ok bool
		out, ok = outputFor(r, objectProtobuf)
		return ok
	})
	return out
}

// outputFor is the form one Accept range asks for, and false when the
// server cannot answer it: a media type other than JSON or protobuf,
// protobuf of objects without a protobuf schema, a Table as protobuf
// (metav1.Table has no protobuf schema; kube-apiserver serves Tables as
// JSON or YAML only), or a transformation it does not know. Parameters
// other than as, g and v (charset, pretty, stream) do not matter, as
// upstream's acceptMediaTypeOptions.
func outputFor(r negotiation.Range, objectProtobuf bool) (output, bool) {
	proto := r.MediaType() == mediaProtobuf
	if !proto && !r.AcceptsJSON() {
		return output{}, false
	}
	as, g, v := r.Params["as"], r.Params["g"], r.Params["v"]
	if as == "" && g == "" && v == "" {
		if proto && !objectProtobuf {
			return output{}, false
		}
		return output{protobuf: proto}, true
	}
	if g != metav1.GroupName || (v != "v1" && v != "v1beta1") {
		return output{}, false
	}
	switch as {
	case tableKind:
		if proto {
			return output{}, false
		}
		return output{as: as, version: v}, true
	case partialKind, partialListKind:
		// Metadata has upstream's schema whatever the kind, so every
		// kind answers it as protobuf, dnsplane's too (kube-apiserver
		// does so for custom resources).
		return output{protobuf: proto, as: as, version: v}, true
	}
	return output{}, false
}

// errorProtobuf reports whether an error answering accept is a protobuf
// Status, as kube-apiserver's ErrorNegotiated decides: the first range
// asking for JSON or protobuf without a transformation (a Status is
// neither a Table nor metadata) wins, whatever the resource.
func errorProtobuf(accept string) bool {
	var proto bool
	negotiation.First(accept, func(r negotiation.Range) bool {
		out, ok := outputFor(r, true)
		ok = ok && out.as == ""
		proto = ok && out.protobuf
		return ok
	})
	return proto
}

// writeBody writes v as protobuf or JSON. Under protobuf v must be an
// upstream object carrying its kind (upstreamProtobuf).
func writeBody(w http.ResponseWriter, code int, protobuf bool, v any) error {
	if !protobuf {
		writeJSON(w, code, v)
		return nil
	}
	obj, ok := v.(runtime.Object)
	if !ok {
		writeJSON(w, code, v)
		return nil
	}
	return writeProtobuf(w, code, obj)
}
