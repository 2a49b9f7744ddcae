package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
)

// kube-apiserver's HTTP server settings (k8s.io/apiserver/pkg/server
// secure_serving.go), for the same reasons.
const (
	// readHeaderTimeout bounds the TLS handshake and the request headers:
	// upstream's 32s, "just shy of requestTimeoutUpperBound" (34s).
	readHeaderTimeout = 32 * time.Second
	// maxHeaderBytes is upstream's 1 MiB.
	maxHeaderBytes = 1 << 20
	// http2MaxStreams is upstream's default --http2-max-streams-per-connection,
	// matching what Go's HTTP/2 clients allow, so a client can open at most
	// that many concurrent requests per connection.
	http2MaxStreams = 100
	// http2BufferPerStream is upstream's resourceBody99Percentile: 99% of
	// objects are smaller, so most POSTs fit in one frame, and the
	// per-connection buffer (this × streams) stays bounded.
	http2BufferPerStream = 256 << 10
)

// newSecureServer is the HTTPS server for handler, with kube-apiserver's
// timeouts and HTTP/2 settings and idle connections closed after idle
// (filters.Limits.IdleTimeout; Go applies it to HTTP/2 connections too).
func newSecureServer(handler http.Handler, tlsConfig *tls.Config, idle time.Duration, errorLog *log.Logger) *http.Server {
	if idle <= 0 {
		idle = filters.DefaultIdleTimeout
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	return &http.Server{
		Handler:           handler,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idle,
		MaxHeaderBytes:    maxHeaderBytes,
		Protocols:         protocols,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          http2MaxStreams,
			MaxReadFrameSize:              http2BufferPerStream,
			MaxReceiveBufferPerStream:     http2BufferPerStream,
			MaxReceiveBufferPerConnection: http2BufferPerStream * http2MaxStreams,
		},
		ErrorLog: errorLog,
	}
}

// EmbeddedEtcdMaxObjectBytes is the largest object the embedded etcd
// stores (its default --max-request-bytes): Config.MaxObjectBytes for a
// server on the embedded etcd.
const EmbeddedEtcdMaxObjectBytes = embeddedEtcdMaxObjectBytes

// Serving is the HTTPS server of a Server, started by ServeTLS.
type Serving struct {
	http *http.Server
	done chan struct{}
	err  error
	// stopWatchCaches ends the watch caches' etcd watches once nothing
	// serves from them, so that closing etcd afterwards is not a failed
	// storage watch of every kind.
	stopWatchCaches func()
}

// ServeTLS serves Handler over TLS on ln, which it wraps with the
// connection limit (Config.Limits), and returns at once. Watches run until
// their context ends; Shutdown cancels it, so a graceful stop does not wait
// out every watch.
func (s *Server) ServeTLS(ln net.Listener, tlsConfig *tls.Config) (*Serving, error) {
	served, err := filters.LimitConnections(ln, s.limits.MaxConnections, s.registerer, s.log)
	if err != nil {
		return nil, fmt.Errorf("connection limit: %w", err)
	}
	s.execSessions.Attach(served)
	baseCtx, cancelBase := context.WithCancel(context.Background())
	hs := newSecureServer(s.Handler(), tlsConfig, s.limits.IdleTimeout, slog.NewLogLogger(s.log.Handler(), slog.LevelDebug))
	hs.BaseContext = func(net.Listener) context.Context { return baseCtx }
	hs.RegisterOnShutdown(cancelBase)
	sv := &Serving{http: hs, done: make(chan struct{}), stopWatchCaches: s.watchCaches.stop}
	go func() {
		defer close(sv.done)
		defer cancelBase()
		if err := hs.ServeTLS(served, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			sv.err = err
		}
	}()
	return sv, nil
}

// Done is closed when the server has stopped serving; Err then says why.
func (sv *Serving) Done() <-chan struct{} { return sv.done }

// Err is why serving stopped: nil after Shutdown.
func (sv *Serving) Err() error {
	<-sv.done
	return sv.err
}

// Shutdown stops accepting connections and gives open requests (watches
// included) until ctx ends; then it closes what is left and stops the
// watch caches.
func (sv *Serving) Shutdown(ctx context.Context) error {
	err := sv.http.Shutdown(ctx)
	if err != nil {
		_ = sv.http.Close()
	}
	<-sv.done
	sv.stopWatchCaches()
	return err
}
