package searchexpand

import (
	"github.com/coredns/coredns/plugin"
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
