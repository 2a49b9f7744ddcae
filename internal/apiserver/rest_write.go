package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
)

// readObject reads the body of a create or update (optionsKind names its
// options in errors: CreateOptions, UpdateOptions) in upstream's order: dry
// run and fieldValidation parameters, decode, then the field validation
// directive applied to what the decoder found. It returns the object and
// whether the request is a dry run.
func (s *Server) readObject(w http.ResponseWriter, r *http.Request, res *Resource, optionsKind string) (any, bool, error) {
	dryRun, err := isDryRun(r)
	if err != nil {
		return nil, false, err
	}
	fv, err := s.parseWriteOptions(r, optionsKind)
	if err != nil {
		return nil, false, err
	}
	data, format, err := objectBody(r, res)
	if err != nil {
		return nil, false, err
	}
	d, err := decodeObject(res, data, format)
	if err != nil {
		return nil, false, err
	}
	if err := applyFieldValidation(w, res, fv, d); err != nil {
		return nil, false, err
	}
	return d.obj, dryRun, nil
}

// checkNamespace reconciles the namespace in the body with the URL's.
func checkNamespace(res *Resource, obj any, urlNamespace string) error {
	m := store.Accessor(obj)
	if !res.Namespaced {
		if m.GetNamespace() != "" {
			m.SetNamespace("")
		}
		return nil
	}
	switch m.GetNamespace() {
	case "":
		m.SetNamespace(urlNamespace)
	case urlNamespace:
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	obj, dryRun, err := s.readObject(w, r, res, "CreateOptions")
	if err != nil {
		return err
	}
	if err := checkNamespace(res, obj, info.Namespace); err != nil {
		return err
	}
	info.fieldManager = managerName(r)
	created, err := s.createObject(r.Context(), res, info, obj, dryRun)
	if err != nil {
		return err
	}
	return s.writeObjects(w, r, res, http.StatusCreated, created, nil, metav1.ListMeta{})
}

// createObject stores a new object through its kind's store, recording
// managed fields at the store's step for them unless an apply computed
// them.
func (s *Server) createObject(ctx context.Context, res *Resource, info requestInfo, obj any, dryRun bool) (any, error) {
	opts := store.CreateOptions{DryRun: dryRun}
	if !info.applied {
		opts.Fields = func(obj any) error { return s.recordFields(res, info, obj, nil) }
	}
	return res.store.Create(ctx, obj, opts)
}

// recordFields refuses obj when its metadata is too large to track, then
// records its managed fields over old's (nil on create): the store's step
// for them.
func (s *Server) recordFields(res *Resource, info requestInfo, obj, old any) error {
	if err := s.checkMetadataFloor(obj); err != nil {
		return err
	}
	s.trackUpdate(res, info, obj, old)
	return nil
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	obj, dryRun, err := s.readObject(w, r, res, "UpdateOptions")
	if err != nil {
		return err
	}
	if err := checkNamespace(res, obj, info.Namespace); err != nil {
		return err
	}
	if name := store.Accessor(obj).GetName(); name != info.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, info.Name))
	}
	info.fieldManager = managerName(r)
	updated, err := s.updateObject(r.Context(), res, info, obj, dryRun)
	if err != nil {
		return err
	}
	return s.writeObjects(w, r, res, http.StatusOK, updated, nil, metav1.ListMeta{})
}

// updateOptions are the store's options of an update described by info.
func (s *Server) updateOptions(res *Resource, info requestInfo, dryRun bool) store.UpdateOptions {
	opts := store.UpdateOptions{Subresource: info.Subresource, DryRun: dryRun}
	if !info.applied {
		opts.Fields = func(obj, old any) error { return s.recordFields(res, info, obj, old) }
	}
	return opts
}

// updateObject stores obj over the current object of info's name.
func (s *Server) updateObject(ctx context.Context, res *Resource, info requestInfo, obj any, dryRun bool) (any, error) {
	return res.store.UpdateCurrent(ctx, info.Namespace, info.Name, obj, s.updateOptions(res, info, dryRun))
}

// updateFrom stores obj over old, which is the current object as read.
func (s *Server) updateFrom(ctx context.Context, res *Resource, info requestInfo, obj, old any, dryRun bool) (any, error) {
	return res.store.Update(ctx, obj, old, s.updateOptions(res, info, dryRun))
}

// deleteOptions are the parts of metav1.DeleteOptions dnsplane honours.
func deleteOptions(r *http.Request) (metav1.DeleteOptions, bool, error) {
	var opts metav1.DeleteOptions
	data, err := readBody(r)
	if err != nil {
		return opts, false, err
	}
	if len(data) > 0 && mediaType(r) == mediaProtobuf {
		// client-go's typed clients send DeleteOptions as protobuf. Only
		// protobuf is accepted under that type (see protobufSerializer).
		if _, _, err := protobufSerializer.Decode(data, nil, &opts); err != nil {
			return opts, false, apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: %v", err))
		}
	} else if len(data) > 0 {
		if err := json.Unmarshal(data, &opts); err != nil {
			return opts, false, apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: %v", err))
		}
	}
	q := r.URL.Query()
	if g := q.Get("gracePeriodSeconds"); g != "" {
		// The query parameter wins over the body, as upstream's
		// parameter codec decodes it over the body's options.
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil {
			return opts, false, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", g))
		}
		opts.GracePeriodSeconds = &n
	}
	if p := q.Get("propagationPolicy"); p != "" {
		pp := metav1.DeletionPropagation(p)
		opts.PropagationPolicy = &pp
	}
	if o := q.Get("orphanDependents"); o != "" {
		b, err := strconv.ParseBool(o)
		if err != nil {
			return opts, false, apierrors.NewBadRequest(fmt.Sprintf("invalid orphanDependents %q", o))
		}
		//nolint:staticcheck // SA1019: deprecated, still honoured by kube-apiserver
		opts.OrphanDependents = &b
	}
	// Upstream's rules for the options (an unknown propagationPolicy,
	// orphanDependents with propagationPolicy); dryRun is checked below
	// with the query's.
	check := opts
	check.DryRun = nil
	if errs := metav1validation.ValidateDeleteOptions(&check); len(errs) > 0 {
		return opts, false, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	dryRun, err := isDryRun(r)
	if err != nil {
		return opts, false, err
	}
	for _, v := range opts.DryRun {
		if v != metav1.DryRunAll {
			return opts, false, apierrors.NewBadRequest(fmt.Sprintf("Invalid dryRun value %q: supported values are \"All\"", v))
		}
		dryRun = true
	}
	return opts, dryRun, nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	if info.Subresource != "" {
		return errMethodNotAllowed("delete", res.GroupResource())
	}
	opts, dryRun, err := deleteOptions(r)
	if err != nil {
		return err
	}
	deleted, removed, err := res.store.Delete(r.Context(), info.Namespace, info.Name, store.DeleteOptions{Preconditions: opts.Preconditions, GracePeriod: opts.GracePeriodSeconds, DryRun: dryRun, GC: &opts})
	if err != nil {
		return err
	}
	code := http.StatusOK
	//nolint:staticcheck // SA1019: upstream's one 202, kept for the clients that rely on it
	if o := opts.OrphanDependents; !removed && o != nil && !*o {
		// kube-apiserver's DeleteResource answers 202 only here: an
		// object left for the garbage collector by orphanDependents=false.
		code = http.StatusAccepted
	}
	body := res.store.Response(deleted, removed)
	if st, ok := body.(*metav1.Status); ok {
		// Whatever output was asked for (a Table included), upstream
		// answers a Status as it is, in JSON or protobuf.
		return writeBody(w, code, errorProtobuf(r.Header.Get("Accept")), st)
	}
	return s.writeObjects(w, r, res, code, body, nil, metav1.ListMeta{})
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	q := r.URL.Query()
	f, err := parseFilter(res, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		return err
	}
	opts, dryRun, err := deleteOptions(r)
	if err != nil {
		return err
	}
	items, rev, err := s.listAll(r.Context(), res, store.ListPrefix(&res.Resource, info.Namespace))
	if err != nil {
		return err
	}
	var deleted []any
	for _, obj := range items {
		if !f.matches(res, obj) {
			continue
		}
		m := store.Accessor(obj)
		gone, _, err := res.store.Delete(r.Context(), m.GetNamespace(), m.GetName(), store.DeleteOptions{GracePeriod: opts.GracePeriodSeconds, DryRun: dryRun, GC: &opts})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		deleted = append(deleted, gone)
	}
	if deleted == nil {
		deleted = []any{}
	}
	return s.writeObjects(w, r, res, http.StatusOK, nil, deleted, metav1.ListMeta{ResourceVersion: strconv.FormatInt(rev, 10)})
}
