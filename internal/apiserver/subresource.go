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
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// subresourcer is a strategy whose kind serves subresources with behaviour
// of its own (internal/registry/<group>/<kind>); status and scale are
// generic and served here for every kind whose row names them.
type subresourcer interface {
	Subresources() []rest.Subresource
}

// kindSubresources are the subresources res's strategy serves.
func kindSubresources(st rest.Strategy) []rest.Subresource {
	if s, ok := st.(subresourcer); ok {
		return s.Subresources()
	}
	return nil
}

// serveSubresource serves the subresources other than status: scale here,
// the others by their kind's handler.
func (s *Server) serveSubresource(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	if info.Subresource == "scale" {
		return s.scale(w, r, res, info)
	}
	if sub, ok := subresourceUpdate(res, info.Subresource); ok {
		return s.updateSubresource(w, r, sub, info)
	}
	i := slices.IndexFunc(res.subresources, func(sub rest.Subresource) bool { return sub.Name == info.Subresource })
	if i < 0 {
		return errNotFoundPath()
	}
	sub := res.subresources[i]
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

// legacySubresources are core resources kube-apiserver still serves that
// are another resource's subresource in all but the URL: POST
// /api/v1/namespaces/NS/bindings is pods/binding naming the pod in the body
// only (upstream's LegacyBindingREST).
var legacySubresources = map[string]struct{ parent, sub string }{"bindings": {"pods", "binding"}}

// serveLegacySubresource answers a legacySubresources request: the
// parent's subresource with no name in the URL.
func (s *Server) serveLegacySubresource(w http.ResponseWriter, r *http.Request, info requestInfo) error {
	alias := legacySubresources[info.Resource]
	if info.GV.Version != "v1" || info.Name != "" || info.Namespace == "" {
		return errNotFoundPath()
	}
	if info.Verb != "create" {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Resource: info.Resource})
	}
	parent, ok := s.reg.Lookup(info.GV.WithResource(alias.parent))
	if !ok {
		return errNotFoundPath()
	}
	i := slices.IndexFunc(parent.subresources, func(sub rest.Subresource) bool { return sub.Name == alias.sub })
	if i < 0 {
		return errNotFoundPath()
	}
	sub := parent.subresources[i]
	body, dryRun, err := s.readSubresourceBody(w, r, parent, sub, info)
	if err != nil {
		return err
	}
	return s.answer(w, r, sub, rest.Request{Verb: info.Verb, Namespace: info.Namespace, Body: body, DryRun: dryRun, HTTP: r})
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
		Name: m.GetName(), Subresource: "status", fieldManager: statusWriter}
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
