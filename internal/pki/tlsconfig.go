package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// ServerTLSConfig returns the API server's TLS configuration. Client
// certificates are optional, because kubectl may authenticate with a bearer
// token instead. A presented certificate is checked by the authenticator
// (authn.X509 with this CA as Roots), which answers a foreign one with 401
// as kube-apiserver does, never by downgrading to token or anonymous access.
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
		// Requested, not verified here: authn.X509 verifies against the CA
		// so a foreign certificate is a 401 (as kube-apiserver), not a
		// failed handshake. ClientCAs still tells clients which CA to use.
		ClientAuth: tls.RequestClientCert,
		NextProtos: []string{"h2", "http/1.1"},
	}, nil
}
