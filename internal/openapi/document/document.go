// Package document builds and serves the OpenAPI documents of a set of
// resources: /openapi/v3 (an index, and one OpenAPI 3.0 document per
// group/version) and /openapi/v2 (one Swagger 2.0 document for every
// group, in JSON and protobuf), listing every path and operation served
// with kube-apiserver's operation extensions and query parameters, as
// kubectl's explain, apply and field validation read them
// (docs/apiserver.md, "Discovery and OpenAPI").
//
// The schemas come from the parent package, which generates them from the
// Go types the strict decoder decodes into; this package only assembles
// and serves documents. It is apart from the generator because the
// server-side apply type converter needs the schemas without the HTTP
// serving.
//
// The documents are k8s.io/kube-openapi's spec3 (OpenAPI 3.0) and spec
// (Swagger 2.0) types, the ones client-go and kubectl decode them into, so
// what is published is what they model.
package document

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/negotiation"
	"github.com/dnsplane/dnsplane/internal/openapi"
	dnsplaneversion "github.com/dnsplane/dnsplane/internal/version"
)

// Resource is one served resource as the documents describe it.
type Resource struct {
	api.Resource
	// Verbs served on the resource; its status subresource, when it has
	// one, serves get, update and patch.
	Verbs []string
	// StrategicMergePatch is true when the resource takes strategic merge
	// patches (the built-in kinds, whose Go types carry the patch
	// strategies), so PATCH lists that body type.
	StrategicMergePatch bool
	// Subresources are the subresources the documents describe, as the API
	// server declares them (internal/registry/rest.Subresource): status,
	// scale, pods/binding, serviceaccounts/token, … The documents name
	// none of them.
	Subresources []Subresource
}

// Subresource is a subresource the documents describe.
type Subresource struct {
	Name string
	// Doc is what its operations are.
	Doc Doc
	// Kind is the kind its operations take and answer, for Create and
	// Kind; Object subresources take and answer the resource's kind.
	Kind schema.GroupVersionKind
	// New returns an empty object of Kind's Go type.
	New func() any
	// Verbs are the verbs of an Object or Kind subresource among get,
	// update and patch.
	Verbs []string
	// PatchTypes are the media types the PATCH of a Kind subresource
	// takes.
	PatchTypes []string
}

// Doc is what a subresource's operations are.
type Doc int

const (
	// Create is a POST that takes and answers Kind (pods/eviction).
	Create Doc = iota + 1
	// Object is a get, put and patch of the resource's kind, as the
	// resource's own (status).
	Object
	// Kind is a get, put and patch of Kind (scale).
	Kind
)

// gvkExtension is x-kubernetes-group-version-kind's value for gvk.
func gvkExtension(gvk schema.GroupVersionKind) map[string]any {
	return map[string]any{"group": gvk.Group, "kind": gvk.Kind, "version": gvk.Version}
}

// hasOwnKind reports whether sub's operations are on a kind of its own.
func (sub Subresource) hasOwnKind() bool { return sub.Doc == Create || sub.Doc == Kind }

func (r *Resource) has(verb string) bool { return slices.Contains(r.Verbs, verb) }

// Set is the OpenAPI documents of a set of resources: the v3 index and
// documents and the v2 document. They are rendered once, by New; a Set is
// read-only afterwards.
type Set struct {
	index     []byte
	indexHash string
	docs      map[string]rendered // by "api/v1", "apis/apps/v1"
	v2        v2Document
}

type rendered struct {
	body []byte
	hash string
}

// Option configures New.
type Option func(*config)

type config struct {
	omitFieldValidation bool
}

// OmitFieldValidation leaves the fieldValidation query parameter out of
// every operation, for when the ServerSideFieldValidation gate is off:
// kubectl then judges server-side field validation unsupported.
func OmitFieldValidation() Option {
	return func(c *config) { c.omitFieldValidation = true }
}

// resources is the input of New with its group/versions.
type resources struct {
	list []Resource
	gvs  []schema.GroupVersion // in order of first appearance
}

func newResources(list []Resource) *resources {
	rs := &resources{list: slices.Clone(list)}
	for _, r := range rs.list {
		if gv := r.GVK.GroupVersion(); !slices.Contains(rs.gvs, gv) {
			rs.gvs = append(rs.gvs, gv)
		}
	}
	return rs
}

// New renders the OpenAPI documents of resources, listed in their order
// (api.Resources': group, then plural).
func New(list []Resource, opts ...Option) (*Set, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	rs := newResources(list)
	o := &Set{docs: map[string]rendered{}}
	schemas, err := newSchemas(rs, openapi.V3)
	if err != nil {
		return nil, err
	}
	type indexEntry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]indexEntry `json:"paths"`
	}{Paths: map[string]indexEntry{}}
	for _, gv := range rs.gvs {
		doc := buildV3(rs, gv, cfg, schemas)
		body, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("openapi v3 %s: %w", gv, err)
		}
		key := groupVersionPath(gv)
		d := rendered{body: body, hash: hash(body)}
		o.docs[key] = d
		index.Paths[key] = indexEntry{ServerRelativeURL: documentURL(key, d.hash)}
	}
	body, err := json.Marshal(index)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 index: %w", err)
	}
	o.index, o.indexHash = body, hash(body)
	if o.v2, err = newV2Document(rs, cfg); err != nil {
		return nil, err
	}
	return o, nil
}

// groupVersionPath is a group/version's key in the index: api/v1,
// apis/<g>/<v>.
func groupVersionPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// hash is the upper-case hex SHA-512 of a document, as kube-openapi
// computes it for the ?hash= parameter and the ETag.
func hash(body []byte) string {
	return fmt.Sprintf("%X", sha512.Sum512(body))
}

func documentURL(key, hash string) string {
	u := url.URL{Path: "/openapi/v3/" + key, RawQuery: url.Values{"hash": {hash}}.Encode()}
	return u.String()
}

// ServeIndex answers GET /openapi/v3 with the index of documents. The index
// changes whenever a document does, so it is never cached without
// revalidation.
func (o *Set) ServeIndex(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Etag", `"`+o.indexHash+`"`)
	h.Set("Cache-Control", "no-cache, private")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(o.index))
}

// ServeGroupVersion answers GET /openapi/v3/<path> (path is "api/v1" or
// "apis/<group>/<version>") like kube-openapi: with ?hash= equal to the
// document's hash the response is immutable; a stale hash is redirected
// (301) to the current one; without a hash it must be revalidated. The ETag
// is the hash, and If-None-Match gives 304. Only JSON is served.
func (o *Set) ServeGroupVersion(w http.ResponseWriter, r *http.Request, path string) {
	path = strings.Trim(path, "/")
	doc, ok := o.docs[path]
	if !ok {
		notFound(w)
		return
	}
	h := w.Header()
	h.Add("Vary", "Accept")
	if !negotiation.AcceptsJSON(r.Header.Get("Accept")) {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Etag", `"`+doc.hash+`"`)
	switch hash := r.URL.Query().Get("hash"); {
	case hash == "":
		h.Set("Cache-Control", "no-cache, private")
	case hash != doc.hash:
		http.Redirect(w, r, documentURL(path, doc.hash), http.StatusMovedPermanently)
		return
	default:
		h.Set("Cache-Control", "public, immutable")
		h.Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc.body))
}

// notFound writes the 404 Status kube-apiserver sends for an unknown
// path, ending with a newline as every Status it encodes (json.Encoder in
// k8s.io/apimachinery/pkg/runtime/serializer/json). The documents
// themselves have none: kube-openapi's handlers write json.Marshal's bytes
// (k8s.io/kube-openapi/pkg/handler3/handler.go).
func notFound(w http.ResponseWriter) {
	body, _ := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "the server could not find the requested resource",
		Reason:   metav1.StatusReasonNotFound,
		Details:  &metav1.StatusDetails{},
		Code:     http.StatusNotFound,
	})
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write(body)
}

// Query parameters, inline in every operation as kubectl's verifier wants.
func oaQuery(name, typ, desc string) *spec3.Parameter {
	return oaParam(name, "query", desc, false, typ)
}

func oaParam(name, in, desc string, required bool, typ string) *spec3.Parameter {
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: name, In: in, Description: desc, Required: required,
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, UniqueItems: true}},
	}}
}

var (
	oaPretty          = oaQuery("pretty", "string", "If 'true', the output is pretty printed.")
	oaDryRun          = oaQuery("dryRun", "string", "When present, modifications are not persisted. The only valid value is All: process every stage of the request without storing the result.")
	oaFieldManager    = oaQuery("fieldManager", "string", "fieldManager is the name of the actor making the change; it must be at most 128 printable characters.")
	oaFieldValidation = oaQuery("fieldValidation", "string", "fieldValidation tells the server what to do with unknown or duplicate fields in the request object. Ignore drops them silently; Warn (the default) drops them and returns one Warning header per field; Strict fails the request with a BadRequest error listing every such field.")
	oaForce           = oaQuery("force", "boolean", "Force is only for apply requests: it makes the caller take ownership of conflicting fields. It must be unset for other patch types.")
	oaListParams      = []*spec3.Parameter{
		oaQuery("allowWatchBookmarks", "boolean", "Ask for watch events of type BOOKMARK."),
		oaQuery("continue", "string", "The continue token of the previous page of a paginated list."),
		oaQuery("fieldSelector", "string", "Restrict the returned objects by their fields."),
		oaQuery("labelSelector", "string", "Restrict the returned objects by their labels."),
		oaQuery("limit", "integer", "The maximum number of objects in one page of a list."),
		oaQuery("resourceVersion", "string", "Which resource version the list or watch is served from."),
		oaQuery("resourceVersionMatch", "string", "How resourceVersion applies to a list."),
		oaQuery("timeoutSeconds", "integer", "Timeout of the list or watch call."),
		oaQuery("watch", "boolean", "Watch for changes and return them as a stream of events."),
	}
	oaDeleteParams = []*spec3.Parameter{
		oaDryRun,
		oaQuery("gracePeriodSeconds", "integer", "The duration in seconds before the object is deleted."),
		oaQuery("orphanDependents", "boolean", "Deprecated: use propagationPolicy."),
		oaQuery("propagationPolicy", "string", "Whether and how garbage collection deletes dependents: Orphan, Background or Foreground."),
	}
)

// oaDeleteCollectionParams are the delete parameters plus the list
// parameters that select what to delete.
func oaDeleteCollectionParams() []*spec3.Parameter {
	out := slices.Clone(oaDeleteParams)
	for _, p := range oaListParams {
		switch p.Name {
		case "allowWatchBookmarks", "watch":
		default:
			out = append(out, p)
		}
	}
	return out
}

// oaPatchTypes are the PATCH body types of a resource: JSON patch, merge
// patch and server-side apply, plus strategic merge patch for the built-in
// kinds the server applies it to (whose schemas carry the patch metadata
// kubectl's client-side apply reads). dnsplane's own kinds behave like
// custom resources and take no strategic merge patch.
func oaPatchTypes(res *Resource) []string {
	out := []string{string(types.ApplyYAMLPatchType), string(types.JSONPatchType), string(types.MergePatchType)}
	if res.StrategicMergePatch {
		out = append(out, string(types.StrategicMergePatchType))
	}
	return out
}

func oaBody(s *spec.Schema, types ...string) *spec3.RequestBody {
	b := &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Content: map[string]*spec3.MediaType{}, Required: true}}
	for _, t := range types {
		b.Content[t] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: s}}
	}
	return b
}

// oaResponseTypes are the media types a response schema is listed under.
var oaResponseTypes = []string{"application/json", "application/yaml"}

// oaResponses are the responses of an operation; every listed code but 401
// returns an object of schema s (none when s is nil).
func oaResponses(s *spec.Schema, codes ...int) *spec3.Responses {
	out := map[int]*spec3.Response{http.StatusUnauthorized: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}}
	for _, c := range codes {
		r := &spec3.Response{ResponseProps: spec3.ResponseProps{Description: http.StatusText(c)}}
		if s != nil {
			r.Content = map[string]*spec3.MediaType{}
			for _, t := range oaResponseTypes {
				r.Content[t] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: s}}
			}
		}
		out[c] = r
	}
	return &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: out}}
}

// oaGroupVersionName is the group/version fragment of operation IDs:
// CoreV1, AppsV1, DiscoveryV1, OperatorDnsplaneIoV1.
func oaGroupVersionName(gv schema.GroupVersion) string {
	group := strings.TrimSuffix(gv.Group, ".k8s.io")
	if group == "" {
		group = "core"
	}
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(oaUpperFirst(part))
	}
	b.WriteString(oaUpperFirst(gv.Version))
	return b.String()
}

func oaUpperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// oaTag is the tag of a group/version's operations: core_v1, apps_v1.
func oaTag(gv schema.GroupVersion) string {
	name := oaGroupVersionName(schema.GroupVersion{Group: gv.Group})
	r := []rune(name)
	r[0] = unicode.ToLower(r[0])
	return string(r) + "_" + gv.Version
}

// buildV3 lists, for every resource of gv, the collection,
// item and status paths with one operation per served verb, and the
// definitions they refer to.
func buildV3(rs *resources, gv schema.GroupVersion, cfg config, schemas *oaSchemas) *spec3.OpenAPI {
	doc := &spec3.OpenAPI{
		Version:    "3.0.0",
		Info:       &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: dnsplaneversion.Kubernetes()}},
		Paths:      &spec3.Paths{Paths: map[string]*spec3.Path{}},
		Components: &spec3.Components{Schemas: schemas.reachable(rs, gv)},
	}
	paths := doc.Paths.Paths
	prefix := "/" + groupVersionPath(gv)
	gvName, tag := oaGroupVersionName(gv), oaTag(gv)
	paths[prefix+"/"] = &spec3.Path{PathProps: spec3.PathProps{Get: &spec3.Operation{OperationProps: spec3.OperationProps{
		Tags: []string{tag}, Description: "get available resources",
		OperationId: "get" + gvName + "APIResources", Responses: oaResponses(nil, http.StatusOK),
	}}}}
	write := []*spec3.Parameter{oaDryRun, oaFieldManager}
	if !cfg.omitFieldValidation {
		write = append(write, oaFieldValidation)
	}
	patch := append(slices.Clone(write), oaForce)

	namespaceParam := oaParam("namespace", "path", "object name and auth scope, such as for teams and projects", true, "string")
	for i := range rs.list {
		res := &rs.list[i]
		if res.GVK.GroupVersion() != gv {
			continue
		}
		kind := res.GVK.Kind
		// The single-object form kubectl's verifier reads.
		gvk := map[string]any{"group": gv.Group, "kind": kind, "version": gv.Version}
		has := res.has
		obj, list := schemas.ref(schemas.kinds[res.GVK]), schemas.ref(schemas.lists[res.GVK])
		status, patchBody := schemas.ref(schemas.status), schemas.ref(schemas.patch)
		// opOf is an operation on objects of kind gvk; op on the
		// resource's own kind.
		opOf := func(gvk map[string]any, operationID, action, desc string, params []*spec3.Parameter, body *spec3.RequestBody, resp *spec.Schema, codes ...int) *spec3.Operation {
			return &spec3.Operation{
				OperationProps: spec3.OperationProps{
					Tags: []string{tag}, Description: desc, OperationId: operationID,
					Parameters: slices.Clone(params), RequestBody: body, Responses: oaResponses(resp, codes...),
				},
				VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
					"x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk,
				}},
			}
		}
		op := func(operationID, action, desc string, params []*spec3.Parameter, body *spec3.RequestBody, resp *spec.Schema, codes ...int) *spec3.Operation {
			return opOf(gvk, operationID, action, desc, params, body, resp, codes...)
		}
		objBody, deleteBody := oaBody(obj, "*/*"), oaBody(schemas.ref(schemas.deleteOptions), "*/*")
		patchBodies := oaBody(patchBody, oaPatchTypes(res)...)
		scope, collection := "", prefix+"/"+res.Plural
		scopeParams := []*spec3.Parameter{oaPretty}
		if res.Namespaced {
			scope = "Namespaced"
			collection = prefix + "/namespaces/{namespace}/" + res.Plural
			scopeParams = []*spec3.Parameter{namespaceParam, oaPretty}
		}
		nameParam := oaParam("name", "path", "name of the "+kind, true, "string")
		itemParams := append([]*spec3.Parameter{nameParam}, scopeParams...)
		id := func(verb, suffix string) string { return verb + gvName + scope + kind + suffix }
		const ok, created, accepted = http.StatusOK, http.StatusCreated, http.StatusAccepted

		coll := &spec3.Path{PathProps: spec3.PathProps{Parameters: scopeParams}}
		if has("list") {
			coll.Get = op(id("list", ""), "list", "list or watch objects of kind "+kind, oaListParams, nil, list, ok)
		}
		if has("create") {
			coll.Post = op(id("create", ""), "post", "create a "+kind, write, objBody, obj, ok, created, accepted)
		}
		if has("deletecollection") {
			coll.Delete = op("delete"+gvName+"Collection"+scope+kind, "deletecollection", "delete collection of "+kind,
				oaDeleteCollectionParams(), deleteBody, status, ok)
		}
		paths[collection] = coll

		item := &spec3.Path{PathProps: spec3.PathProps{Parameters: itemParams}}
		if has("get") {
			item.Get = op(id("read", ""), "get", "read the specified "+kind, nil, nil, obj, ok)
		}
		if has("update") {
			item.Put = op(id("replace", ""), "put", "replace the specified "+kind, write, objBody, obj, ok, created)
		}
		if has("patch") {
			item.Patch = op(id("patch", ""), "patch", "partially update the specified "+kind, patch, patchBodies, obj, ok, created)
		}
		if has("delete") {
			item.Delete = op(id("delete", ""), "delete", "delete a "+kind, oaDeleteParams, deleteBody, status, ok, accepted)
		}
		paths[collection+"/{name}"] = item

		// Subresources of another kind as kube-apiserver lists them: the
		// operation's group-version-kind is the subresource's, so kubectl's
		// field-validation check, which looks for the PATCH of the object's
		// own kind, never picks /scale (k8s.io/cli-runtime
		// pkg/resource/query_param_verifier_v3.go).
		subParams := func(subKind string) []*spec3.Parameter {
			return append([]*spec3.Parameter{oaParam("name", "path", "name of the "+subKind, true, "string")}, scopeParams...)
		}
		for _, sub := range res.Subresources {
			// As kube-apiserver names them: readCoreV1NamespacedPodStatus,
			// "read status of the specified Pod";
			// createCoreV1NamespacedPodEviction, "create eviction of a Pod".
			title := strings.ToUpper(sub.Name[:1]) + sub.Name[1:]
			path := &spec3.Path{PathProps: spec3.PathProps{Parameters: itemParams}}
			subHas := func(verb string) bool { return slices.Contains(sub.Verbs, verb) }
			switch sub.Doc {
			case Object:
				if subHas("get") {
					path.Get = op(id("read", title), "get", "read "+sub.Name+" of the specified "+kind, nil, nil, obj, ok)
				}
				if subHas("update") {
					path.Put = op(id("replace", title), "put", "replace "+sub.Name+" of the specified "+kind, write, objBody, obj, ok, created)
				}
				if subHas("patch") {
					path.Patch = op(id("patch", title), "patch", "partially update "+sub.Name+" of the specified "+kind, patch, patchBodies, obj, ok, created)
				}
			case Kind:
				body, subGVK := schemas.ref(schemas.subresources[sub.Kind]), gvkExtension(sub.Kind)
				path.Parameters = subParams(sub.Kind.Kind)
				if subHas("get") {
					path.Get = opOf(subGVK, id("read", title), "get", "read "+sub.Name+" of the specified "+kind, nil, nil, body, ok)
				}
				if subHas("update") {
					path.Put = opOf(subGVK, id("replace", title), "put", "replace "+sub.Name+" of the specified "+kind, write,
						oaBody(body, "*/*"), body, ok, created)
				}
				if subHas("patch") {
					path.Patch = opOf(subGVK, id("patch", title), "patch", "partially update "+sub.Name+" of the specified "+kind, patch,
						oaBody(patchBody, sub.PatchTypes...), body, ok, created)
				}
			case Create:
				body := schemas.ref(schemas.subresources[sub.Kind])
				path.Parameters = subParams(sub.Kind.Kind)
				path.Post = opOf(gvkExtension(sub.Kind), id("create", title), "post",
					"create "+sub.Name+" of a "+kind, write, oaBody(body, "*/*"), body, ok, created, accepted)
			default:
				continue
			}
			paths[collection+"/{name}/"+sub.Name] = path
		}
		if res.Namespaced && has("list") {
			paths[prefix+"/"+res.Plural] = &spec3.Path{PathProps: spec3.PathProps{
				Parameters: []*spec3.Parameter{oaPretty},
				Get: op("list"+gvName+kind+"ForAllNamespaces", "list", "list or watch objects of kind "+kind,
					oaListParams, nil, list, ok),
			}}
		}
	}
	return doc
}

// oaSchemas are the definitions of every kind of the resources (and of their
// lists and the meta types the operations use) in one OpenAPI dialect.
type oaSchemas struct {
	gen                          *openapi.Generator
	specs                        map[string]*spec.Schema            // gen's definitions as kube-openapi types
	kinds, lists                 map[schema.GroupVersionKind]string // definition names by item GVK
	status, deleteOptions, patch string
	// subresources are the kinds of the resources' subresources that have
	// one of their own (Subresource.hasOwnKind).
	subresources map[schema.GroupVersionKind]string
}

func newSchemas(rs *resources, v openapi.Version) (*oaSchemas, error) {
	g := openapi.NewGenerator(v)
	s := &oaSchemas{gen: g, kinds: map[schema.GroupVersionKind]string{}, lists: map[schema.GroupVersionKind]string{},
		subresources: map[schema.GroupVersionKind]string{}}
	for _, res := range rs.list {
		name, err := g.AddKind(res.GVK, res.New())
		if err != nil {
			return nil, fmt.Errorf("schema of %v: %w", res.GVK, err)
		}
		listGVK := res.GVK.GroupVersion().WithKind(res.GVK.Kind + "List")
		list, err := g.AddList(listGVK, name)
		if err != nil {
			return nil, fmt.Errorf("schema of %v: %w", listGVK, err)
		}
		s.kinds[res.GVK], s.lists[res.GVK] = name, list
	}
	var err error
	if s.status, err = g.AddKind(metav1.SchemeGroupVersion.WithKind("Status"), &metav1.Status{}); err != nil {
		return nil, fmt.Errorf("schema of Status: %w", err)
	}
	if s.deleteOptions, err = g.AddType(reflect.TypeFor[metav1.DeleteOptions]()); err != nil {
		return nil, fmt.Errorf("schema of DeleteOptions: %w", err)
	}
	if s.patch, err = g.AddType(reflect.TypeFor[metav1.Patch]()); err != nil {
		return nil, fmt.Errorf("schema of Patch: %w", err)
	}
	for _, res := range rs.list {
		for _, sub := range res.Subresources {
			if _, done := s.subresources[sub.Kind]; done || !sub.hasOwnKind() {
				continue
			}
			if s.subresources[sub.Kind], err = g.AddKind(sub.Kind, sub.New()); err != nil {
				return nil, fmt.Errorf("schema of %v: %w", sub.Kind, err)
			}
		}
	}
	if s.specs, err = g.Definitions().KubeOpenAPI(); err != nil {
		return nil, err
	}
	return s, nil
}

// ref refers to a definition.
func (s *oaSchemas) ref(name string) *spec.Schema { return spec.RefSchema(s.gen.Ref(name).Ref) }

// reachable returns the definitions gv's operations refer to, directly or
// not.
func (s *oaSchemas) reachable(rs *resources, gv schema.GroupVersion) map[string]*spec.Schema {
	roots := []string{s.status, s.deleteOptions, s.patch}
	for _, res := range rs.list {
		if res.GVK.GroupVersion() == gv {
			roots = append(roots, s.kinds[res.GVK], s.lists[res.GVK])
			for _, sub := range res.Subresources {
				if sub.hasOwnKind() {
					roots = append(roots, s.subresources[sub.Kind])
				}
			}
		}
	}
	out := map[string]*spec.Schema{}
	for name := range s.gen.Definitions().Reachable(roots...) {
		out[name] = s.specs[name]
	}
	return out
}
