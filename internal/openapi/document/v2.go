package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/dnsplane/dnsplane/internal/negotiation"
	"github.com/dnsplane/dnsplane/internal/openapi"
	dnsplaneversion "github.com/dnsplane/dnsplane/internal/version"
)

// /openapi/v2: one Swagger 2.0 document for every group, with the same
// paths and operations as the v3 documents (it is converted from them) and
// the definitions of every kind. kubectl reads it as protobuf for its
// fallback support check, its client-side validation (when server-side
// field validation is off) and its apply patch-type lookup.

const (
	// mediaV2Proto is the protobuf form kubectl asks for.
	mediaV2Proto = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	// mediaV2ProtoDotted is the other spelling kube-openapi accepts
	// and the Content-Type it answers with for both: client-go checks the
	// response's Content-Type with mime.ParseMediaType, which rejects the
	// '@' of the one it asks for.
	mediaV2ProtoDotted = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// v2Document is the v2 document in both encodings, each with the
// upper-case hex SHA-512 of its bytes as ETag.
type v2Document struct {
	json, proto         []byte
	jsonHash, protoHash string
}

// newV2Document renders /openapi/v2 in JSON and protobuf.
func newV2Document(rs *resources, cfg config) (v2Document, error) {
	schemas, err := newSchemas(rs, openapi.V2)
	if err != nil {
		return v2Document{}, err
	}
	defs := spec.Definitions{}
	for name, s := range schemas.specs {
		defs[name] = *s
	}
	doc := &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: dnsplaneversion.Kubernetes()}},
		Paths:       &spec.Paths{Paths: map[string]spec.PathItem{}},
		Definitions: defs,
		Parameters:  map[string]spec.Parameter{},
	}}
	for _, gv := range rs.gvs {
		v3 := buildV3(rs, gv, cfg, schemas)
		for path, item := range v3.Paths.Paths {
			doc.Paths.Paths[path] = v2PathItem(doc, item)
		}
	}
	var out v2Document
	if out.json, err = json.Marshal(doc); err != nil {
		return out, fmt.Errorf("openapi v2: %w", err)
	}
	parsed, err := openapi_v2.ParseDocument(out.json)
	if err != nil {
		return out, fmt.Errorf("openapi v2: gnostic: %w", err)
	}
	deterministic := proto.MarshalOptions{Deterministic: true}
	if out.proto, err = deterministic.Marshal(parsed); err != nil {
		return out, fmt.Errorf("openapi v2: protobuf: %w", err)
	}
	out.jsonHash, out.protoHash = hash(out.json), hash(out.proto)
	return out, nil
}

func v2PathItem(doc *spec.Swagger, item *spec3.Path) spec.PathItem {
	return spec.PathItem{PathItemProps: spec.PathItemProps{
		Get: v2Operation(doc, item.Get), Put: v2Operation(doc, item.Put), Post: v2Operation(doc, item.Post),
		Delete: v2Operation(doc, item.Delete), Patch: v2Operation(doc, item.Patch),
		Parameters: v2Parameters(doc, item.Parameters),
	}}
}

// v2Parameters turns v3 parameters into v2 ones. Query parameters become
// references to global parameters of the same name, as kube-apiserver's v2
// document has them (kubectl resolves both forms).
func v2Parameters(doc *spec.Swagger, ps []*spec3.Parameter) []spec.Parameter {
	var out []spec.Parameter
	for _, p := range ps {
		sp := spec.Parameter{
			ParamProps:        spec.ParamProps{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required},
			SimpleSchema:      spec.SimpleSchema{Type: p.Schema.Type[0]},
			CommonValidations: spec.CommonValidations{UniqueItems: p.Schema.UniqueItems},
		}
		if p.In == "query" {
			doc.Parameters[p.Name] = sp
			sp = spec.Parameter{Refable: spec.Refable{Ref: spec.MustCreateRef("#/parameters/" + p.Name)}}
		}
		out = append(out, sp)
	}
	return out
}

func v2Operation(doc *spec.Swagger, op *spec3.Operation) *spec.Operation {
	if op == nil {
		return nil
	}
	out := &spec.Operation{
		OperationProps: spec.OperationProps{
			Description: op.Description, Schemes: []string{"https"}, Tags: op.Tags, ID: op.OperationId,
			Parameters: v2Parameters(doc, op.Parameters),
			Responses:  &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{}}},
		},
		VendorExtensible: op.VendorExtensible,
	}
	if b := op.RequestBody; b != nil {
		out.Consumes = slices.Sorted(maps.Keys(b.Content))
		body := spec.Parameter{ParamProps: spec.ParamProps{Name: "body", In: "body", Required: b.Required, Schema: b.Content[out.Consumes[0]].Schema}}
		out.Parameters = append([]spec.Parameter{body}, out.Parameters...)
	}
	produces := map[string]bool{}
	for code, r := range op.Responses.StatusCodeResponses {
		sr := spec.Response{ResponseProps: spec.ResponseProps{Description: r.Description}}
		for t, m := range r.Content {
			produces[t] = true
			sr.Schema = m.Schema
		}
		out.Responses.StatusCodeResponses[code] = sr
	}
	out.Produces = slices.Sorted(maps.Keys(produces))
	return out
}

// ServeV2 answers GET /openapi/v2 like kube-openapi: protobuf when the
// Accept header prefers it (as kubectl's does), with Content-Type
// mediaV2ProtoDotted; JSON otherwise; 406 when it admits neither. The ETag
// is the SHA-512 of the representation; If-None-Match gives 304. The
// document changes only with the server, so it must be revalidated.
func (o *Set) ServeV2(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Add("Vary", "Accept")
	var body []byte
	var hash string
	switch negotiateV2(r.Header.Get("Accept")) {
	case mediaV2Proto:
		h.Set("Content-Type", mediaV2ProtoDotted)
		body, hash = o.v2.proto, o.v2.protoHash
	case "application/json":
		h.Set("Content-Type", "application/json")
		body, hash = o.v2.json, o.v2.jsonHash
	default:
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	h.Set("Etag", `"`+hash+`"`)
	h.Set("Cache-Control", "no-cache, private")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// negotiateV2 picks the representation of /openapi/v2 for an Accept
// header: mediaV2Proto for either spelling of the protobuf type,
// "application/json" for application/json, application/* or */*, whichever
// comes first in order of preference, or "" for neither.
func negotiateV2(accept string) string {
	for _, r := range negotiation.ParseAccept(accept) {
		switch r.MediaType() {
		case mediaV2Proto, mediaV2ProtoDotted:
			return mediaV2Proto
		case "application/json", "application/*", "*/*":
			return "application/json"
		}
	}
	return ""
}
