package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/discovery"
	"github.com/dnsplane/dnsplane/internal/openapi/document"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// subresourcer is a strategy whose kind declares subresources of its own
// (internal/registry/<group>/<kind>).
type subresourcer interface {
	Subresources() []rest.Subresource
}

// declaredSubresources are the subresources of the kind of row r with
// strategy st: the generic ones the row names (rest.Generic), then the
// kind's own, each declared once and servable.
func declaredSubresources(r api.Resource, st rest.Strategy) ([]rest.Subresource, error) {
	var out []rest.Subresource
	for _, name := range r.Subresources {
		sub, ok := rest.Generic(name, st)
		if !ok {
			return nil, fmt.Errorf("apiserver: %s's row names %q, which is no generic subresource: its package declares it", r.GVK.Kind, name)
		}
		out = append(out, sub)
	}
	if s, ok := st.(subresourcer); ok {
		out = append(out, s.Subresources()...)
	}
	for i, sub := range out {
		if err := sub.Check(); err != nil {
			return nil, fmt.Errorf("apiserver: %s: %w", r.GVK.Kind, err)
		}
		if slices.ContainsFunc(out[:i], func(o rest.Subresource) bool { return o.Name == sub.Name }) {
			return nil, fmt.Errorf("apiserver: %s lists subresource %q twice", r.GVK.Kind, sub.Name)
		}
		if r.GroupVersionResource() == namespacesResource && !namespaceSubresources.Has(sub.Name) {
			// The URL of any other would parse, here and in the
			// authorizer, as a resource inside the namespace.
			return nil, fmt.Errorf("apiserver: namespaces/%s is not a namespace subresource kube's request parser knows", sub.Name)
		}
	}
	return out, nil
}

// discoveryResources is what discovery announces of reg: each resource, its
// verbs, and the kind and verbs of each of its subresources, from their
// declarations.
func discoveryResources(reg *Registry) []discovery.Resource {
	var out []discovery.Resource
	for _, r := range reg.Resources() {
		d := discovery.Resource{Resource: r.Resource, Verbs: r.Verbs}
		for _, sub := range r.subresources {
			d.KindSubresources = append(d.KindSubresources, discovery.Subresource{Name: sub.Name, Kind: sub.KindOf(r.GVK), Verbs: sub.Verbs})
		}
		out = append(out, d)
	}
	return out
}

// documentResources is what the OpenAPI documents describe of reg: each
// resource, its verbs, whether it takes strategic merge patches, and the
// subresources its declarations document.
func documentResources(reg *Registry) []document.Resource {
	var out []document.Resource
	for _, r := range reg.Resources() {
		d := document.Resource{Resource: r.Resource, Verbs: r.Verbs, StrategicMergePatch: builtin(r)}
		for _, sub := range r.subresources {
			ds := document.Subresource{Name: sub.Name, Kind: sub.Kind, New: sub.New, Verbs: sub.Verbs}
			switch sub.Document {
			case rest.DocumentCreate:
				ds.Doc = document.Create
			case rest.DocumentObject:
				ds.Doc = document.Object
			case rest.DocumentKind:
				ds.Doc = document.Kind
				if sub.Scale {
					ds.PatchTypes = scalePatchTypes
				}
			default:
				continue
			}
			d.Subresources = append(d.Subresources, ds)
		}
		out = append(out, d)
	}
	return out
}

// serveSubresource serves the subresources with handlers of their own:
// scale here (scale.go), the others by their kind's Serve.
func (s *Server) serveSubresource(w http.ResponseWriter, r *http.Request, res *Resource, sub rest.Subresource, info requestInfo) error {
	if sub.Scale {
		return s.scale(w, r, res, sub, info)
	}
	if !slices.Contains(sub.Verbs, info.Verb) {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Group: res.GVK.Group, Resource: res.Plural + "/" + sub.Name})
	}
	req := rest.Request{Verb: info.Verb, Namespace: info.Namespace, Name: info.Name, HTTP: r}
	var err error
	if sub.New != nil && (info.Verb == "create" || info.Verb == "update") {
		req.Body, req.DryRun, err = s.readSubresourceBody(w, r, res, sub, info)
		if err == nil {
			err = s.admitSubresourceWrite(r.Context(), res, info, req.Body)
		}
	} else {
		req.DryRun, err = isDryRun(r)
	}
	if err != nil {
		return err
	}
	return s.answer(w, r, sub, req)
}

// objectSubresourceAllows reports whether sub, a subresource that reads
// and writes its parent whole, serves verb. The main resource's handlers
// serve it, and they watch one named object as they get it.
func objectSubresourceAllows(sub rest.Subresource, verb string) bool {
	return slices.Contains(sub.Verbs, verb) || verb == "watch" && slices.Contains(sub.Verbs, "get")
}

// readSubresourceBody decodes a subresource's body (JSON, YAML or
// protobuf, as for the kind itself) and reconciles its namespace with the
// URL's.
func (s *Server) readSubresourceBody(w http.ResponseWriter, r *http.Request, parent *Resource, sub rest.Subresource, info requestInfo) (any, bool, error) {
	shape := &Resource{Resource: api.Resource{GVK: sub.Kind, Plural: sub.Name, Namespaced: parent.Namespaced, New: sub.New}}
	options := "CreateOptions"
	if info.Verb == "update" {
		options = "UpdateOptions"
	}
	obj, dryRun, err := s.readObject(w, r, shape, options)
	if err != nil {
		return nil, false, err
	}
	if err := checkNamespace(shape, obj, info.Namespace); err != nil {
		return nil, false, err
	}
	return obj, dryRun, nil
}

// answer runs sub and writes its response.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, sub rest.Subresource, req rest.Request) error {
	resp, err := sub.Serve(r.Context(), objects{s}, req)
	if err != nil {
		return err
	}
	if resp.Handler != nil {
		resp.Handler.ServeHTTP(w, r)
		return nil
	}
	writeJSON(w, resp.Code, resp.Object)
	return nil
}

// serveAlias answers a request to an older resource that is a
// subresource in all but the URL (rest.Subresource.Alias): the parent's
// subresource, created with no name in the URL.
func (s *Server) serveAlias(w http.ResponseWriter, r *http.Request, a alias, info requestInfo) error {
	if info.Name != "" || info.Namespace == "" {
		return errNotFoundPath()
	}
	if info.Verb != "create" {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Group: info.GV.Group, Resource: info.Resource})
	}
	body, dryRun, err := s.readSubresourceBody(w, r, a.parent, a.sub, info)
	if err != nil {
		return err
	}
	return s.answer(w, r, a.sub, rest.Request{Verb: info.Verb, Namespace: info.Namespace, Body: body, DryRun: dryRun, HTTP: r})
}

// objects is the Server's storage as subresources see it (rest.Objects).
type objects struct{ s *Server }

var _ rest.Objects = objects{}

func (o objects) resource(gvr schema.GroupVersionResource) (*Resource, error) {
	res, ok := o.s.reg.Lookup(gvr)
	if !ok {
		return nil, fmt.Errorf("apiserver: a subresource asked for %s, which is not served", gvr)
	}
	return res, nil
}

func (o objects) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (any, error) {
	res, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	kv, err := o.s.storage.Get(ctx, store.Key(&res.Resource, namespace, name))
	if err != nil {
		return nil, store.Error(&res.Resource, name, err)
	}
	obj, err := store.Decode(&res.Resource, kv)
	if err != nil {
		return nil, err
	}
	store.SetTypeMeta(&res.Resource, obj)
	return obj, nil
}

func (o objects) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]any, error) {
	res, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	list, err := o.s.storage.List(ctx, store.ListPrefix(&res.Resource, namespace), storage.ListOptions{})
	if err != nil {
		return nil, store.Error(&res.Resource, "", err)
	}
	out := make([]any, 0, len(list.Items))
	for _, kv := range list.Items {
		obj, err := store.Decode(&res.Resource, kv)
		if err != nil {
			return nil, err
		}
		store.SetTypeMeta(&res.Resource, obj)
		out = append(out, obj)
	}
	return out, nil
}

func (o objects) GuaranteedUpdate(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, dryRun bool, tryUpdate func(obj any) error) (any, error) {
	res, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	key := store.Key(&res.Resource, namespace, name)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !store.RetryConflict(ctx, attempt) {
			return nil, store.Error(&res.Resource, name, ctx.Err())
		}
		kv, err := o.s.storage.Get(ctx, key)
		if err != nil {
			return nil, store.Error(&res.Resource, name, err)
		}
		obj, err := store.Decode(&res.Resource, kv)
		if err != nil {
			return nil, err
		}
		if err := tryUpdate(obj); err != nil {
			return nil, err
		}
		if !dryRun {
			value, err := store.Encode(&res.Resource, obj)
			if err != nil {
				return nil, err
			}
			out, err := o.s.storage.Update(ctx, key, value, kv.ModRevision)
			if errors.Is(err, storage.ErrConflict) {
				continue
			}
			if err != nil {
				return nil, store.Error(&res.Resource, name, err)
			}
			store.Accessor(obj).SetResourceVersion(strconv.FormatInt(out.ModRevision, 10))
		}
		store.SetTypeMeta(&res.Resource, obj)
		return obj, nil
	}
}

// statusWriter is the field manager of the API server's own status writes,
// as kube-apiserver's loopback client is named.
const statusWriter = "kube-apiserver"

func (o objects) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj any, dryRun bool) (any, error) {
	res, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	if !res.HasStatus() {
		return nil, fmt.Errorf("apiserver: %s has no status subresource", gvr)
	}
	m := store.Accessor(obj)
	info := requestInfo{Verb: "update", GV: res.GroupVersion(), Namespace: m.GetNamespace(), Resource: res.Plural,
		Name: m.GetName(), Subresource: rest.StatusName, fieldManager: statusWriter}
	return o.s.updateObject(ctx, res, info, obj, dryRun)
}

func (o objects) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts *metav1.DeleteOptions, dryRun bool) (any, error) {
	res, err := o.resource(gvr)
	if err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	obj, _, err := res.store.Delete(ctx, namespace, name, store.DeleteOptions{Preconditions: opts.Preconditions, GracePeriod: opts.GracePeriodSeconds, DryRun: dryRun, GC: opts})
	return obj, err
}

// admitSubresourceWrite runs the store's admission of a POST to a
// subresource served by its kind (store.AdmitSubresourceCreate); other
// verbs are not writes.
func (s *Server) admitSubresourceWrite(ctx context.Context, res *Resource, info requestInfo, body any) error {
	if info.Verb != "create" {
		return nil
	}
	return res.store.AdmitSubresourceCreate(ctx, info.Subresource, info.Namespace, info.Name, body)
}
