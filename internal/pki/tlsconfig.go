package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// ServerTLSConfig returns the API server's TLS configuration. Client
// certificates are optional, because kubectl may authenticate with a bearer
// token instead, but one that is presented must chain to the CA: a bad
// certificate fails the handshake instead of silently downgrading to token or
// anonymous access.
func (b *Bundle) ServerTLSConfig() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(b.ServingCertFile, b.ServingKeyFile)
	if err != nil {
		return nil, fmt.Errorf("pki: load serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(b.CA)
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
		NextProtos:   []string{"h2", "http/1.1"},
	}, nil
}
