package loopguard

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	loopCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "loops_total",
		Help:      "Counter of queries answered SERVFAIL because they came back to the server that had already passed them on (a forwarding loop).",
	}, []string{"server"})

	hopLimitCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "hop_limit_total",
		Help:      "Counter of queries answered REFUSED because they had already passed the maximum number of servers.",
	}, []string{"server"})

	malformedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "malformed_total",
		Help:      "Counter of queries with a loop marker option that was not a whole number of IDs (ignored and replaced).",
	}, []string{"server"})
)
