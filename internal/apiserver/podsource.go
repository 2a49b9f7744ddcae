package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/watchcache"
)

// PodSource is a Server's pods as a client-go cache.ListerWatcher of
// k8s.io/api Pods, read in process: the list from storage, the watch from
// the server's watch cache. The server's own pod informer (the Node
// authorizer's graph, NodeRestriction, Pod Security, the token
// authenticator; apiserver.Config.Informers) reads it instead of a watch
// of the server over HTTP, which cost a JSON encode and decode of every pod
// event: a fifth of the server's CPU on pod creates (dnsplane's Pod carries
// spec.dnsParams, so pods are JSON where kube-apiserver's loopback client
// reads protobuf). The pods are views of the watch cache's objects
// (podView), without managed fields: read only, as an informer's objects
// are. docs/apiserver.md, "Reads on the write path".
//
// It is made before the Server (the informers are registered with the
// authorizers, which the Server needs) and attached to it once built; until
// then List and Watch fail, and the reflector retries.
type PodSource struct {
	server atomic.Pointer[Server]
}

// Attach makes p serve s's pods.
func (p *PodSource) Attach(s *Server) { p.server.Store(s) }

// IsWatchListSemanticsUnSupported tells client-go's reflector to list and
// then watch (watchlist.DoesClientNotSupportWatchListSemantics): Watch
// does not send initial events.
func (p *PodSource) IsWatchListSemanticsUnSupported() bool { return true }

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// open is the server and its pods resource for a list or watch with opts,
// which must have no selectors: the informers never ask for any.
func (p *PodSource) open(opts metav1.ListOptions) (*Server, *Resource, error) {
	if opts.LabelSelector != "" || opts.FieldSelector != "" {
		return nil, nil, fmt.Errorf("pod source: selectors are not supported (label %q, field %q)", opts.LabelSelector, opts.FieldSelector)
	}
	s := p.server.Load()
	if s == nil {
		return nil, nil, errors.New("pod source: the API server is not built yet")
	}
	res, ok := s.reg.Lookup(podsGVR)
	if !ok {
		return nil, nil, errors.New("pod source: pods are not served")
	}
	return s, res, nil
}

// List returns every pod at one revision, whatever resourceVersion asks
// (a consistent read, which any of the semantics allows).
func (p *PodSource) List(opts metav1.ListOptions) (runtime.Object, error) {
	s, res, err := p.open(opts)
	if err != nil {
		return nil, err
	}
	objs, rev, err := s.listAll(context.Background(), res, store.ListPrefix(&res.Resource, ""))
	if err != nil {
		return nil, store.Error(&res.Resource, "", err)
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(rev, 10)}, Items: make([]corev1.Pod, 0, len(objs))}
	for _, obj := range objs {
		v, err := podView(obj)
		if err != nil {
			return nil, err
		}
		list.Items = append(list.Items, *v)
	}
	return list, nil
}

// Watch streams the pod events after opts.ResourceVersion from the watch
// cache; a revision the cache no longer holds is the 410 Expired error
// event after which a reflector lists again.
func (p *PodSource) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	s, res, err := p.open(opts)
	if err != nil {
		return nil, err
	}
	from, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
	if err != nil || from <= 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod source: watch from resourceVersion %q: list first", opts.ResourceVersion))
	}
	cache, err := s.watchCaches.forResource(res)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	wt, err := cache.Watch(ctx, from, watchcache.Options{KeyPrefix: store.ListPrefix(&res.Resource, "")})
	if err != nil {
		cancel()
		if errors.Is(err, storage.ErrCompacted) {
			return nil, apierrors.NewResourceExpired(err.Error())
		}
		return nil, err
	}
	out := make(chan watch.Event)
	pw := watch.NewProxyWatcher(out)
	go func() {
		defer close(out)
		defer cancel()
		defer wt.Stop()
		emit := func(ev *watchcache.Event) bool {
			e, ok := podWatchEvent(ev, s)
			if !ok {
				return true
			}
			select {
			case out <- e:
				return true
			case <-pw.StopChan():
				return false
			}
		}
		for _, ev := range wt.Backlog() {
			if !emit(ev) {
				return
			}
		}
		for {
			select {
			case <-pw.StopChan():
				return
			case ev, ok := <-wt.Events():
				if !ok {
					// Fell behind or lost its history: the reflector
					// watches again from its last revision, or lists on
					// 410, as after a closed HTTP watch.
					if err := wt.Err(); errors.Is(err, storage.ErrCompacted) {
						status := apierrors.NewResourceExpired(err.Error()).Status()
						select {
						case out <- watch.Event{Type: watch.Error, Object: &status}:
						case <-pw.StopChan():
						}
					}
					return
				}
				if !emit(ev) {
					return
				}
			}
		}
	}()
	return pw, nil
}

// podWatchEvent is ev as an informer's watch event, as an unfiltered HTTP
// watch sends it (watchEventFor); false skips an object that does not
// decode, which the HTTP watch logs and skips too.
func podWatchEvent(ev *watchcache.Event, s *Server) (watch.Event, bool) {
	var (
		typ watch.EventType
		obj any
		err error
	)
	switch ev.Type {
	case storage.Added:
		typ = watch.Added
		obj, err = ev.Object()
	case storage.Deleted:
		typ = watch.Deleted
		obj, err = ev.PrevObject()
	default:
		typ = watch.Modified
		obj, err = ev.Object()
	}
	if err == nil && obj == nil {
		err = errors.New("no object")
	}
	var v *corev1.Pod
	if err == nil {
		v, err = podView(obj)
	}
	if err != nil {
		s.log.Error("pod source: skipping undecodable pod", "key", ev.Key, "err", err)
		return watch.Event{}, false
	}
	return watch.Event{Type: typ, Object: v}, true
}

// podView is a served pod as a k8s.io/api Pod, what a client of the server
// decodes from its JSON (spec.dnsParams has no field there), without
// managed fields: a new top-level struct whose slices, maps and strings
// are the watch cache's, never written.
func podView(obj any) (*corev1.Pod, error) {
	p, ok := obj.(*dpcorev1.Pod)
	if !ok {
		return nil, fmt.Errorf("pod source: a stored pod decoded as %T", obj)
	}
	v := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: p.ObjectMeta, Spec: p.Spec.PodSpec, Status: p.Status}
	v.ManagedFields = nil
	return v, nil
}

// Register makes p the source of f's pod informer (upstream's, with its
// namespace index), for every reader of f. Call it before anything asks f
// for the pod informer (internal/authz does, building the Node authorizer).
func (p *PodSource) Register(f informers.SharedInformerFactory) {
	f.InformerFor(&corev1.Pod{}, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(p, &corev1.Pod{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	})
}
