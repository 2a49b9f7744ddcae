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

	"github.com/dnsplane/dnsplane/internal/negotiation"
	"github.com/dnsplane/dnsplane/internal/openapi"
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

type swDocument struct {
	Swagger     string                  `json:"swagger"`
	Info        oaInfo                  `json:"info"`
	Paths       map[string]*swPathItem  `json:"paths"`
	Definitions openapi.Definitions     `json:"definitions"`
	Parameters  map[string]*swParameter `json:"parameters,omitempty"`
}

type swPathItem struct {
	Get        *swOperation   `json:"get,omitempty"`
	Put        *swOperation   `json:"put,omitempty"`
	Post       *swOperation   `json:"post,omitempty"`
	Delete     *swOperation   `json:"delete,omitempty"`
	Patch      *swOperation   `json:"patch,omitempty"`
	Parameters []*swParameter `json:"parameters,omitempty"`
}

type swOperation struct {
	Description string                `json:"description,omitempty"`
	Consumes    []string              `json:"consumes,omitempty"`
	Produces    []string              `json:"produces,omitempty"`
	Schemes     []string              `json:"schemes,omitempty"`
	Tags        []string              `json:"tags,omitempty"`
	OperationID string                `json:"operationId"`
	Parameters  []*swParameter        `json:"parameters,omitempty"`
	Responses   map[string]swResponse `json:"responses"`
	Action      string                `json:"x-kubernetes-action,omitempty"`
	GVK         *oaGVK                `json:"x-kubernetes-group-version-kind,omitempty"`
}

// swParameter is a non-body parameter, a body parameter (Schema set), or a
// reference to a global parameter (Ref set).
type swParameter struct {
	Ref         string          `json:"$ref,omitempty"`
	Name        string          `json:"name,omitempty"`
	In          string          `json:"in,omitempty"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Type        string          `json:"type,omitempty"`
	UniqueItems bool            `json:"uniqueItems,omitempty"`
	Schema      *openapi.Schema `json:"schema,omitempty"`
}

type swResponse struct {
	Description string          `json:"description"`
	Schema      *openapi.Schema `json:"schema,omitempty"`
}

// newV2Document renders /openapi/v2 in JSON and protobuf.
func newV2Document(rs *resources, cfg config) (v2Document, error) {
	schemas, err := newSchemas(rs, openapi.V2)
	if err != nil {
		return v2Document{}, err
	}
	doc := &swDocument{
		Swagger:     "2.0",
		Info:        oaInfo{Title: "Kubernetes", Version: kubernetesVersion},
		Paths:       map[string]*swPathItem{},
		Definitions: schemas.gen.Definitions(),
		Parameters:  map[string]*swParameter{},
	}
	for _, gv := range rs.gvs {
		v3 := buildV3(rs, gv, cfg, schemas)
		for path, item := range v3.Paths {
			doc.Paths[path] = doc.convertPathItem(item)
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

func (d *swDocument) convertPathItem(item *oaPathItem) *swPathItem {
	return &swPathItem{
		Get: d.convertOperation(item.Get), Put: d.convertOperation(item.Put), Post: d.convertOperation(item.Post),
		Delete: d.convertOperation(item.Delete), Patch: d.convertOperation(item.Patch),
		Parameters: d.convertParameters(item.Parameters),
	}
}

// convertParameters turns v3 parameters into v2 ones. Query parameters
// become references to global parameters of the same name, as
// kube-apiserver's v2 document has them (kubectl resolves both forms).
func (d *swDocument) convertParameters(ps []oaParameter) []*swParameter {
	var out []*swParameter
	for _, p := range ps {
		sp := &swParameter{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required, Type: p.Schema.Type, UniqueItems: p.Schema.UniqueItems}
		if p.In == "query" {
			d.Parameters[p.Name] = sp
			sp = &swParameter{Ref: "#/parameters/" + p.Name}
		}
		out = append(out, sp)
	}
	return out
}

func (d *swDocument) convertOperation(op *oaOperation) *swOperation {
	if op == nil {
		return nil
	}
	out := &swOperation{
		Description: op.Description, Schemes: []string{"https"}, Tags: op.Tags, OperationID: op.OperationID,
		Parameters: d.convertParameters(op.Parameters), Responses: map[string]swResponse{},
		Action: op.Action, GVK: op.GVK,
	}
	if b := op.RequestBody; b != nil {
		out.Consumes = slices.Sorted(maps.Keys(b.Content))
		body := &swParameter{Name: "body", In: "body", Required: b.Required, Schema: b.Content[out.Consumes[0]].Schema}
		out.Parameters = append([]*swParameter{body}, out.Parameters...)
	}
	produces := map[string]bool{}
	for code, r := range op.Responses {
		sr := swResponse{Description: r.Description}
		for t, m := range r.Content {
			produces[t] = true
			sr.Schema = m.Schema
		}
		out.Responses[code] = sr
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
