package apiserver

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/watchcache"
)

// watchCaches holds one watch cache per served kind, made on its first
// watch: every API watch of the kind shares its one etcd watch and decode
// (docs/apiserver.md, "Watch").
type watchCaches struct {
	store    objectStore
	log      *slog.Logger
	metrics  *watchCacheMetrics
	capacity int

	mu     sync.Mutex
	caches map[schema.GroupVersionKind]*watchcache.Cache
}

// watchCacheMetrics are kube's watch cache metrics, under kube's names:
// a cache's storage watches (kube counts a cache's initializations, each of
// which opens one) and the watchers closed for falling behind.
type watchCacheMetrics struct {
	initializations *prometheus.CounterVec
	terminated      *prometheus.CounterVec
}

func newWatchCacheMetrics(reg prometheus.Registerer) (*watchCacheMetrics, error) {
	m := &watchCacheMetrics{
		initializations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_cache_initializations_total",
			Help: "Counter of watch cache initializations (etcd watches opened) broken by resource type.",
		}, []string{"group", "resource"}),
		terminated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_terminated_watchers_total",
			Help: "Counter of watchers closed due to unresponsiveness broken by resource type.",
		}, []string{"group", "resource"}),
	}
	for _, c := range []prometheus.Collector{m.initializations, m.terminated} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering watch cache metrics: %w", err)
		}
	}
	return m, nil
}

func newWatchCaches(store objectStore, log *slog.Logger, m *watchCacheMetrics, capacity int) *watchCaches {
	return &watchCaches{store: store, log: log, metrics: m, capacity: capacity, caches: map[schema.GroupVersionKind]*watchcache.Cache{}}
}

// forResource returns res's cache, making it on first use.
func (w *watchCaches) forResource(res *Resource) (*watchcache.Cache, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.caches[res.GVK]; ok {
		return c, nil
	}
	group, resource := res.GVK.Group, res.Plural
	cfg := watchcache.Config{
		Source:   w.store,
		Prefix:   store.ListPrefix(&res.Resource, ""),
		Capacity: w.capacity,
		Decode:   func(kv storage.KV) (any, error) { return store.Decode(&res.Resource, kv) },
		Logger:   w.log.With("resource", res.Plural, "group", res.GVK.Group),
		OnStorageWatch: func() {
			w.metrics.initializations.WithLabelValues(group, resource).Inc()
		},
		OnTerminated: func() {
			w.metrics.terminated.WithLabelValues(group, resource).Inc()
		},
	}
	if field := watchIndexField(res); field != "" {
		fs := res.Strategy.(rest.FieldSelectable)
		cfg.Index = func(obj any) string { return fs.FieldSet(obj)[field] }
	}
	c, err := watchcache.New(cfg)
	if err != nil {
		return nil, err
	}
	w.caches[res.GVK] = c
	return c, nil
}

// stop ends every cache's storage watch and closes its watchers; a watch
// after it starts the cache again.
func (w *watchCaches) stop() {
	w.mu.Lock()
	caches := make([]*watchcache.Cache, 0, len(w.caches))
	for _, c := range w.caches {
		caches = append(caches, c)
	}
	w.mu.Unlock()
	for _, c := range caches {
		c.Stop()
	}
}

// watchIndexField is the field res's watch cache indexes, "" for none.
func watchIndexField(res *Resource) string {
	if wi, ok := res.Strategy.(rest.WatchIndexed); ok {
		return wi.WatchIndexField()
	}
	return ""
}

// watchOptions picks what of res's cache a watch of prefix with filter f
// needs: only the index's events when the field selector asks for exactly
// one value of the indexed field.
func watchOptions(res *Resource, prefix string, f filter) watchcache.Options {
	opts := watchcache.Options{KeyPrefix: prefix}
	if field := watchIndexField(res); field != "" && f.fields != nil {
		if v, ok := f.fields.RequiresExactMatch(field); ok {
			opts.Indexed, opts.IndexValue = true, v
		}
	}
	return opts
}
