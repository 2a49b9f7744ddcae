package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve serves h over TLS on ln until ctx ends, then shuts down, letting
// in-flight reviews finish for up to ShutdownGrace. getCert supplies the
// certificate per handshake, so a rotated one is used without a restart.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler: h,
		// kube-apiserver sends one request per review and waits at most
		// the configuration's timeoutSeconds (at most 30) for the answer.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    1 << 20,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: getCert},
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving webhook: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down webhook: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving webhook: %w", err)
	}
	return nil
}

// ShutdownGrace is how long in-flight reviews may take after a stop.
const ShutdownGrace = 10 * time.Second
