package searchexpand

import (
	"strconv"
	"sync/atomic"

	"github.com/coredns/coredns/plugin"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	expansionsCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "expansions_total",
		Help:      "Counter of autopath queries expanded with a search list.",
	}, []string{"server"})

	candidatesCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "candidates_tried_total",
		Help:      "Counter of candidate names resolved through the rest of the plugin chain.",
	}, []string{"server"})

	hitsCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "hits_total",
		Help:      "Counter of expansions answered, by the position of the found candidate in search order.",
	}, []string{"server", "position"})

	rejectedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "option_rejected_total",
		Help:      "Counter of search list options ignored, by reason (invalid, untrusted).",
	}, []string{"server", "reason"})

	maxForwardedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "max_forwarded_exceeded_total",
		Help:      "Counter of expansions whose search list had more forwarded search domains than max_forwarded; the excess was not tried.",
	}, []string{"server"})

	duration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "duration_seconds",
		Buckets:   plugin.TimeBuckets,
		Help:      "Histogram of the time an expansion took.",
	}, []string{"server"})
)

var (
	cacheHits = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "cache_hits_total",
		Help:      "Counter of autopath queries answered from the answer cache.",
	}, []string{"server"})

	cacheMisses = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "cache_misses_total",
		Help:      "Counter of autopath queries not found in the answer cache (expanded).",
	}, []string{"server"})

	cacheEvictions = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "cache_evictions_total",
		Help:      "Counter of answer cache entries evicted to make room for new ones.",
	}, []string{"server"})

	cacheEntries = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "cache_entries",
		Help:      "The number of entries in the answer cache.",
	}, []string{"server"})
)

// serverMetrics are the metrics every expansion touches, resolved once per
// server label: WithLabelValues hashes the labels and takes the vector's
// lock on every call, which showed in the profile of a cached lookup.
type serverMetrics struct {
	expansions  prometheus.Counter
	candidates  prometheus.Counter
	duration    prometheus.Observer
	cacheHits   prometheus.Counter
	cacheMisses prometheus.Counter
	// positions[i] is hits_total{position="i"}, created on first use so
	// that only positions that occurred are exported, as before.
	positions [searchpath.MaxEntries + 1]atomic.Pointer[prometheus.Counter]
	server    string
}

// metricsFor returns the metrics of server, creating them on first use. The
// map lives in the plugin instance and holds one entry per server block
// address, so it is bounded by the configuration.
func (s *SearchExpand) metricsFor(server string) *serverMetrics {
	if m, ok := s.servers.Load(server); ok {
		return m.(*serverMetrics)
	}
	m := &serverMetrics{
		expansions: expansionsCount.WithLabelValues(server),
		candidates: candidatesCount.WithLabelValues(server),
		duration:   duration.WithLabelValues(server),
		server:     server,
	}
	if s.cache != nil {
		// Only a server with a cache exports the cache metrics.
		m.cacheHits = cacheHits.WithLabelValues(server)
		m.cacheMisses = cacheMisses.WithLabelValues(server)
	}
	actual, _ := s.servers.LoadOrStore(server, m)
	return actual.(*serverMetrics)
}

// hit counts an answer found at position in search order.
func (m *serverMetrics) hit(position int) {
	if position < 0 || position >= len(m.positions) {
		return
	}
	p := m.positions[position].Load()
	if p == nil {
		c := hitsCount.WithLabelValues(m.server, strconv.Itoa(position))
		m.positions[position].CompareAndSwap(nil, &c)
		p = m.positions[position].Load()
	}
	(*p).Inc()
}
