package searchopt

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	taggedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "tagged_total",
		Help:      "Counter of autopath queries the search list option was attached to.",
	}, []string{"server"})

	strippedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "stripped_total",
		Help:      "Counter of queries a client-sent search list option was removed from.",
	}, []string{"server"})

	trimmedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "host_search_trimmed_total",
		Help:      "Counter of autopath queries tagged without the end of the host search list, which did not fit the option's limits.",
	}, []string{"server"})

	unparsableCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "unparsable_total",
		Help:      "Counter of queries in the autopath zone that could not be tagged.",
	}, []string{"server"})
)
