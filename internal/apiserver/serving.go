package apiserver

import (
	"crypto/tls"
	"log"
	"net/http"
	"time"
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
// (Limits.IdleTimeout; Go applies it to HTTP/2 connections too).
func newSecureServer(handler http.Handler, tlsConfig *tls.Config, idle time.Duration, errorLog *log.Logger) *http.Server {
	if idle <= 0 {
		idle = DefaultIdleTimeout
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
