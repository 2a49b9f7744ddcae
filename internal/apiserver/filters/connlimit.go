package filters

import (
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Why a connection limit, which kube-apiserver does not have: `dnsplane up`
// runs the API server, embedded etcd, the cluster DNS and the node cache in
// one process, so they share one descriptor limit. Without a limit on the
// API's connections, anyone who can open TCP connections to the HTTPS port
// (no credentials needed: one GET /healthz per connection, kept alive) can
// use up every descriptor, and then embedded etcd fails to open a file and
// calls Fatal, taking DNS down with the API. With the limit, the API
// degrades (new connections are refused) and everything else keeps its
// descriptors.

// Connection budget when MaxConnections is 0 (AutoMaxConnections).
const (
	// minReservedDescriptors are kept for everything but the API's
	// connections, however low the descriptor limit: embedded etcd (its
	// listeners, WAL and snapshot files, bbolt, the files it opens while
	// purging, compacting and cutting the WAL — etcd exits when it cannot),
	// the API server's etcd client connections (both ends, when etcd is
	// embedded), the cluster DNS and node cache sockets (UDP and TCP
	// listeners, connections forwarded to the upstreams and from the node
	// cache to the cluster DNS, one UDP socket per query in flight), the
	// client ends of in-process informers' connections to the API, and
	// the data dir files. `up` at rest uses about 25; 128 leaves room for
	// bursts of DNS forwarding and etcd maintenance.
	minReservedDescriptors = 128
	// reservedFraction scales the reserve with the limit: with a large
	// limit, DNS forwarding under load (thousands of queries in flight)
	// needs more than the fixed minimum.
	reservedFraction = 4 // a quarter
	// defaultMaxConnections is the limit where the descriptor limit cannot
	// be read (non-Unix systems).
	defaultMaxConnections = 1024
)

// AutoMaxConnections derives the connection limit from the descriptor limit
// nofile (the soft RLIMIT_NOFILE, which Go raises to the hard limit at
// start): nofile minus a reserve of max(128, nofile/4) for everything else
// in the process. Below 171 descriptors that would leave less than a quarter
// for the API, so the API gets a quarter (and at least one connection):
// with so few descriptors nothing is safe, but the API must stay reachable.
//
//	nofile 200 → 72, 1024 → 768, 4096 → 3072, 1048576 → 786432
func AutoMaxConnections(nofile uint64) int {
	const maxInt32 = 1<<31 - 1
	n := int(min(nofile, maxInt32)) // RLIM_INFINITY and friends
	reserve := max(minReservedDescriptors, n/reservedFraction)
	return max(n-reserve, n/reservedFraction, 1)
}

// ConnLimitListener closes accepted connections beyond its limit at once,
// so a flood costs one descriptor for an instant per rejected connection,
// and the client sees its connection reset instead of a hang.
type ConnLimitListener struct {
	net.Listener
	limit    int64
	open     atomic.Int64
	rejected prometheus.Counter
	log      *slog.Logger
	// lastWarn (unix nanoseconds) rate-limits the warning: a flood would
	// otherwise write a line per rejected connection.
	lastWarn atomic.Int64
}

// connWarnInterval is how often a sustained flood is logged.
const connWarnInterval = time.Minute

// newConnLimitListener wraps ln with a limit of limit open connections and
// registers its metrics with reg.
func newConnLimitListener(ln net.Listener, limit int, reg prometheus.Registerer, log *slog.Logger) (*ConnLimitListener, error) {
	l := &ConnLimitListener{
		Listener: ln,
		limit:    int64(limit),
		log:      log,
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dnsplane_apiserver_rejected_connections_total",
			Help: "Connections to the API server closed right after accept because --max-connections were open.",
		}),
	}
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "dnsplane_apiserver_open_connections",
		Help: "Connections to the API server currently open (TLS handshakes, requests, idle keep-alives).",
	}, func() float64 { return float64(l.open.Load()) })
	maxGauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "dnsplane_apiserver_max_connections",
		Help: "The API server's connection limit (--max-connections, or derived from the descriptor limit).",
	})
	maxGauge.Set(float64(limit))
	for _, c := range []prometheus.Collector{l.rejected, open, maxGauge} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering connection metrics: %w", err)
		}
	}
	return l, nil
}

// Accept returns the next connection within the limit; connections over it
// are closed here and never reach the HTTP server.
func (l *ConnLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.limit {
			return &limitedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.reject(c)
	}
}

func (l *ConnLimitListener) reject(c net.Conn) {
	// Linger 0 sends RST instead of FIN: the client learns at once, and
	// the server keeps no TIME_WAIT state for connections it never served.
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
	l.rejected.Inc()
	now := time.Now().UnixNano()
	last := l.lastWarn.Load()
	if now-last >= int64(connWarnInterval) && l.lastWarn.CompareAndSwap(last, now) {
		l.log.Warn("API server connection limit reached; closing new connections until some close (--max-connections)",
			"max_connections", l.limit, "remote", c.RemoteAddr().String())
	}
}

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	l      *ConnLimitListener
	closed atomic.Bool
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
	}
	return err
}

// LimitConnections wraps the HTTPS listener ln with the connection limit:
// configured (--max-connections), or derived from the descriptor limit
// when 0 (AutoMaxConnections). It registers the connection metrics with
// reg and logs the chosen limit, because it is the first thing to look at
// when clients see their connections reset.
func LimitConnections(ln net.Listener, configured int, reg prometheus.Registerer, log *slog.Logger) (*ConnLimitListener, error) {
	limit, how := configured, "--max-connections"
	if limit == 0 {
		nofile, err := descriptorLimit()
		if err != nil {
			limit, how = defaultMaxConnections, "default ("+err.Error()+")"
		} else {
			limit = AutoMaxConnections(nofile)
			how = fmt.Sprintf("automatic: descriptor limit %d minus max(%d, %d/%d) reserved for etcd, DNS and files",
				nofile, minReservedDescriptors, nofile, reservedFraction)
		}
	}
	l, err := newConnLimitListener(ln, limit, reg, log)
	if err != nil {
		return nil, err
	}
	log.Info("API server connection limit", "max_connections", limit, "source", how)
	return l, nil
}
