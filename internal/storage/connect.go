package storage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap/zapcore"
)

// ClientConfig says how to reach etcd.
type ClientConfig struct {
	// Endpoints are client URLs: http://, https:// or unix://.
	Endpoints []string
	// CAFile verifies the servers (system roots when empty); CertFile and KeyFile are the
	// client certificate, both or neither. Any of them switches TLS on, as does an
	// https:// endpoint.
	CAFile, CertFile, KeyFile string
	// DialTimeout bounds connecting and the first request (default 10s).
	DialTimeout time.Duration
	// Logger receives the etcd client's warnings and errors (discarded when nil).
	Logger *slog.Logger
}

const defaultDialTimeout = 10 * time.Second

// Connect returns a client once etcd has answered a linearizable read, i.e. once the
// cluster is reachable and has a leader, so a misconfigured --etcd-servers fails at
// startup with the endpoints named rather than on the first API request.
func Connect(ctx context.Context, cfg ClientConfig) (*clientv3.Client, error) {
	var endpoints []string
	for _, ep := range cfg.Endpoints {
		if ep = strings.TrimSpace(ep); ep != "" {
			endpoints = append(endpoints, ep)
		}
	}
	if len(endpoints) == 0 {
		return nil, errors.New("connecting to etcd: no endpoints given")
	}
	timeout := cfg.DialTimeout
	if timeout <= 0 {
		timeout = defaultDialTimeout
	}
	tlsCfg, err := clientTLS(cfg, endpoints)
	if err != nil {
		return nil, err
	}

	client, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: timeout,
		TLS:         tlsCfg,
		// Keepalives detect a dead member behind a half-open connection so that the
		// balancer moves to another endpoint instead of waiting on TCP timeouts.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
		// Let etcd's --max-request-bytes decide what is too large (it answers with an
		// error we map to ErrTooLarge) instead of the client's smaller default of 2 MiB.
		MaxCallSendMsgSize: 32 << 20,
		// Error, not warn: the client warns about every failed attempt, including the
		// expected ones (a compacted revision, a CAS read), which would drown real trouble.
		Logger: newZapLogger(loggerOrDiscard(cfg.Logger).With("component", "etcd-client"), zapcore.ErrorLevel, nil),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %s: %w", strings.Join(endpoints, ","), err)
	}

	probeCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = client.Get(probeCtx, "/", clientv3.WithCountOnly())
	// With etcd auth on, the user (e.g. the client certificate's CN) may only read its
	// prefix; a refusal still proves the cluster is up and has a leader.
	if err != nil && !errors.Is(err, rpctypes.ErrPermissionDenied) {
		client.Close()
		return nil, fmt.Errorf("etcd at %s did not answer within %s: %w", strings.Join(endpoints, ","), timeout, err)
	}
	return client, nil
}

func clientTLS(cfg ClientConfig, endpoints []string) (*tls.Config, error) {
	files := cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != ""
	https := false
	for _, ep := range endpoints {
		switch {
		case strings.HasPrefix(ep, "https://"), strings.HasPrefix(ep, "unixs://"):
			https = true
		case files && (strings.HasPrefix(ep, "http://") || strings.HasPrefix(ep, "unix://")):
			// The etcd client would talk plaintext to such an endpoint despite the
			// certificates; refuse rather than silently skip TLS.
			return nil, fmt.Errorf("etcd client TLS: certificate files given but endpoint %s is not https", ep)
		}
	}
	if !files && !https {
		return nil, nil
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("etcd client TLS: --etcd-certfile and --etcd-keyfile must be given together")
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("etcd client TLS: reading CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd client TLS: no PEM certificates in %s", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("etcd client TLS: loading client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func loggerOrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
