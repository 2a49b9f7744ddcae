package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
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
	m := accessor(obj)
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

// createObject stores a new object: server metadata and defaults, managed
// fields (unless an apply computed them), admission, validation, then
// persist.
func (s *Server) createObject(ctx context.Context, res *Resource, info requestInfo, obj any, dryRun bool) (any, error) {
	// Upstream's NamespaceLifecycle admission runs before the name is
	// generated and before validation.
	if err := s.requireNamespace(ctx, res, obj); err != nil {
		return nil, err
	}
	if m := accessor(obj); m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(generateName(m.GetGenerateName()))
	}
	if err := s.admitNodeWrite(ctx, res, admission.Create, info.Subresource, accessor(obj).GetNamespace(), accessor(obj).GetName(), obj, nil); err != nil {
		return nil, err
	}
	initMetadata(obj, s.now())
	initGeneration(res, obj)
	res.Strategy.PrepareForCreate(ctx, obj)
	if !info.applied {
		if err := s.checkMetadataFloor(obj); err != nil {
			return nil, err
		}
		s.trackUpdate(res, info, obj, nil)
	}
	// After the managed fields, as kube-apiserver admits: what admission
	// adds is owned by no manager.
	if err := rest.Admit(ctx, res.Strategy, obj, nil); err != nil {
		return nil, err
	}
	if err := validate(ctx, res, info, obj, nil); err != nil {
		return nil, err
	}
	return s.persist(ctx, res, obj, nil, dryRun)
}

// persist reserves what obj needs, then creates (old == nil) or
// compare-and-swaps it over old; on failure the reservation is returned.
func (s *Server) persist(ctx context.Context, res *Resource, obj, old any, dryRun bool) (any, error) {
	m := accessor(obj)
	undo, err := reserve(ctx, res, obj, old, dryRun)
	if err != nil {
		return nil, err
	}
	key := storageKey(res, m.GetNamespace(), m.GetName())
	if dryRun {
		if old == nil {
			if _, err := s.store.Get(ctx, key); err == nil {
				return nil, apierrors.NewAlreadyExists(res.GroupResource(), m.GetName())
			}
		}
		setTypeMeta(res, obj)
		return obj, nil
	}
	value, err := encodeForStorage(res, obj)
	if err != nil {
		undo()
		return nil, err
	}
	if old != nil {
		// An update that changes nothing is not written, as upstream: the
		// resourceVersion stays and watchers see no event.
		if prev, err := encodeForStorage(res, old); err == nil && bytes.Equal(prev, value) {
			undo()
			m.SetResourceVersion(accessor(old).GetResourceVersion())
			setTypeMeta(res, obj)
			return obj, nil
		}
	}
	var kv storage.KV
	if old == nil {
		kv, err = s.store.Create(ctx, key, value)
	} else {
		rev, _ := strconv.ParseInt(accessor(old).GetResourceVersion(), 10, 64)
		kv, err = s.store.Update(ctx, key, value, rev)
	}
	if err != nil {
		undo()
		return nil, storageError(res, m.GetName(), err)
	}
	if r, ok := res.Strategy.(rest.UpdateReleaser); ok && old != nil {
		r.ReleaseUpdated(ctx, obj, old)
	}
	m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	setTypeMeta(res, obj)
	return obj, nil
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	obj, dryRun, err := s.readObject(w, r, res, "UpdateOptions")
	if err != nil {
		return err
	}
	if err := checkNamespace(res, obj, info.Namespace); err != nil {
		return err
	}
	if name := accessor(obj).GetName(); name != info.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, info.Name))
	}
	info.fieldManager = managerName(r)
	updated, err := s.updateObject(r.Context(), res, info, obj, dryRun)
	if err != nil {
		return err
	}
	return s.writeObjects(w, r, res, http.StatusOK, updated, nil, metav1.ListMeta{})
}

// updateObject stores obj over the current object. A resourceVersion in obj
// is a precondition (409 when stale); without one the update applies to
// whatever is current, as upstream allows for built-in kinds.
func (s *Server) updateObject(ctx context.Context, res *Resource, info requestInfo, obj any, dryRun bool) (any, error) {
	want, err := parseResourceVersion(accessor(obj).GetResourceVersion())
	if err != nil {
		return nil, err
	}
	kv, err := s.store.Get(ctx, storageKey(res, info.Namespace, info.Name))
	if err != nil {
		return nil, storageError(res, info.Name, err)
	}
	if want != 0 && want != kv.ModRevision {
		return nil, errConflict(res.GroupResource(), info.Name)
	}
	old, err := decodeStored(res, kv)
	if err != nil {
		return nil, err
	}
	return s.updateFrom(ctx, res, info, obj, old, dryRun)
}

// updateFrom stores obj over old, which is the current object as read.
func (s *Server) updateFrom(ctx context.Context, res *Resource, info requestInfo, obj, old any, dryRun bool) (any, error) {
	// The object as the client sent it (patched), as kube-apiserver's
	// admission sees it, before the strategy keeps what may not change.
	if err := s.admitNodeWrite(ctx, res, admission.Update, info.Subresource, info.Namespace, info.Name, obj, old); err != nil {
		return nil, err
	}
	sub, whole := res.objectSubresource(info.Subresource)
	if whole {
		// A subresource written whole under a strategy of its own
		// (status, finalize, approval) keeps what it may not change.
		// /scale writes the parent through the main resource's rules.
		managed := accessor(obj).GetManagedFields()
		keepServerMetadata(obj, old)
		obj = sub.Update.PrepareForUpdate(ctx, obj, old)
		if info.applied {
			accessor(obj).SetManagedFields(managed)
		}
	} else {
		prepareUpdate(ctx, res, obj, old)
	}
	if !info.applied {
		if err := s.checkMetadataFloor(obj); err != nil {
			return nil, err
		}
		s.trackUpdate(res, info, obj, old)
	}
	if !whole {
		if err := admitUpdate(ctx, res, info.Subresource, obj, old); err != nil {
			return nil, err
		}
	}
	accessor(obj).SetResourceVersion(accessor(old).GetResourceVersion())
	if err := validate(ctx, res, info, obj, old); err != nil {
		return nil, err
	}
	if emptiedFinalizers(res, obj, old) && !dryRun {
		// The last finalizer of an object being deleted is gone: the
		// update deletes it (graceful.go).
		rev, _ := strconv.ParseInt(accessor(old).GetResourceVersion(), 10, 64)
		return s.removeObject(ctx, res, obj, rev)
	}
	return s.persist(ctx, res, obj, old, dryRun)
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
	deleted, removed, err := s.deleteObject(r.Context(), res, info.Namespace, info.Name, deleteRequest{pre: opts.Preconditions, grace: opts.GracePeriodSeconds, dryRun: dryRun, gc: &opts})
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
	body := deleteResponse(res, deleted, removed)
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
	items, rev, err := s.listAll(r.Context(), res, listPrefix(res, info.Namespace))
	if err != nil {
		return err
	}
	var deleted []any
	for _, obj := range items {
		if !f.matches(res, obj) {
			continue
		}
		m := accessor(obj)
		gone, _, err := s.deleteObject(r.Context(), res, m.GetNamespace(), m.GetName(), deleteRequest{grace: opts.GracePeriodSeconds, dryRun: dryRun, gc: &opts})
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
