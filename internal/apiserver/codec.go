package apiserver

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/negotiation"
	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

// MaxRequestBodyBytes is kube-apiserver's limit on a request body.
const MaxRequestBodyBytes = 3 << 20

// readBody reads a request body within MaxRequestBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxRequestBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxRequestBodyBytes))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	return data, nil
}

// mediaType returns the media type of the request's Content-Type, without
// parameters; "" when absent (negotiation.ContentType).
func mediaType(r *http.Request) string {
	return negotiation.ContentType(r.Header.Get("Content-Type"))
}

func errUnsupportedMediaType(accepted ...string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// objectBody returns an object body as JSON or YAML for decodeObject.
// client-go's typed clients send built-in kinds as protobuf; those bodies are
// decoded with client-go's scheme and re-encoded as JSON, so every body goes
// through the one decoder. Protobuf has no field names, so it cannot carry
// unknown or duplicate fields in the strict decoder's sense (field numbers the
// Go types do not know are skipped, as upstream does), nor dnsplane's
// additions such as dnsParams, which only JSON and YAML bodies can set.
func objectBody(r *http.Request, res *Resource) ([]byte, strictdecode.Format, error) {
	mt := mediaType(r)
	var format strictdecode.Format
	switch mt {
	case "application/json", "":
		format = strictdecode.JSON
	case "application/yaml":
		format = strictdecode.YAML
	case mediaProtobuf:
		if !builtin(res) {
			return nil, 0, errUnsupportedMediaType("application/json", "application/yaml")
		}
		format = strictdecode.JSON
	default:
		accepted := []string{"application/json", "application/yaml"}
		if builtin(res) {
			accepted = append(accepted, mediaProtobuf)
		}
		return nil, 0, errUnsupportedMediaType(accepted...)
	}
	data, err := readBody(r)
	if err != nil {
		return nil, 0, err
	}
	if mt == mediaProtobuf {
		if data, err = protobufToJSON(res, data); err != nil {
			return nil, 0, err
		}
	}
	return data, format, nil
}

// protobufSerializer decodes the k8s\x00 protobuf envelope and nothing else.
// client-go's UniversalDeserializer must not be used for bodies labelled
// protobuf: it also sniffs JSON and YAML, and decoding those with client-go's
// types skips the strict decoder (unknown and duplicate fields) and drops
// dnsplane's additions such as dnsParams, so the object would be stored with
// data silently lost. Stateless, so one value serves every request.
var protobufSerializer = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

// protobufToJSON decodes a protobuf body of res's kind and re-encodes it as
// JSON for decodeObject. The kind missing from the envelope defaults to the
// URL's, as upstream passes the resource's kind as the decoder's default.
func protobufToJSON(res *Resource, data []byte) ([]byte, error) {
	defaultGVK := res.GVK
	obj, gvk, err := protobufSerializer.Decode(data, &defaultGVK, nil)
	if err != nil {
		return nil, undecodable(res, gvk, err, data)
	}
	if gvk.GroupVersion() != res.GroupVersion() {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gvk.GroupVersion(), res.APIVersion()))
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("re-encoding a protobuf %s as JSON: %w", gvk.Kind, err)
	}
	return out, nil
}

// undecodable is kube-apiserver's 400 for a body its decoder rejected: when
// the decoder got as far as a kind, the usual "cannot be handled"; otherwise
// (not protobuf at all, an empty or truncated envelope) "the object provided
// is unrecognized" with the start of the body, so the client sees what it sent.
func undecodable(res *Resource, gvk *schema.GroupVersionKind, err error, body []byte) error {
	if gvk != nil && gvk.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, res.GVK.Kind, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", res.GVK.Kind, err, summarizeBody(body, 30)))
}

// summarizeBody quotes up to limit bytes of a body for an error message as
// upstream does: JSON objects as text, anything else in hex.
func summarizeBody(data []byte, limit int) string {
	if len(data) == 0 {
		return "<empty>"
	}
	more := ""
	if len(data) > limit {
		data, more = data[:limit], " ..."
	}
	if data[0] == '{' {
		return string(data) + more
	}
	return hex.EncodeToString(data) + more
}

// decoded is a request body decoded into a resource's Go type.
type decoded struct {
	obj      any
	problems []strictdecode.FieldProblem // unknown and duplicate fields
	format   strictdecode.Format
}

// decodeObject decodes data (one JSON or YAML object) into res's Go type. An
// apiVersion or kind that contradicts the URL is a 400, as upstream.
func decodeObject(res *Resource, data []byte, format strictdecode.Format) (decoded, error) {
	docs, err := strictdecode.SplitFormat(data, format)
	if err != nil {
		return decoded{}, cannotHandle(res, err)
	}
	if len(docs) != 1 {
		return decoded{}, cannotHandle(res, fmt.Errorf("the body holds %d objects, want exactly one", len(docs)))
	}
	apiVersion, kind, err := docs[0].TypeMeta()
	if err != nil {
		return decoded{}, cannotHandle(res, err)
	}
	if apiVersion != "" && apiVersion != res.APIVersion() {
		return decoded{}, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, res.APIVersion()))
	}
	if kind != "" && kind != res.GVK.Kind {
		return decoded{}, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", kind, res.GVK.Kind))
	}
	obj := res.New()
	problems, err := docs[0].Decode(obj)
	if err != nil {
		return decoded{}, cannotHandle(res, err)
	}
	store.SetTypeMeta(&res.Resource, obj)
	return decoded{obj: obj, problems: problems, format: format}, nil
}

// cannotHandle is kube-apiserver's 400 for a body that does not decode.
func cannotHandle(res *Resource, err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", res.GVK.Kind, res.GVK.Version, res.GVK.Kind, err))
}
