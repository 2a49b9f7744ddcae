package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"time"

	"github.com/dnsplane/dnsplane/internal/apiserver"
	"github.com/dnsplane/dnsplane/internal/pki"
)

// kubeletTLS is how the API server dials node agents for pods/exec: with
// its kubelet-client certificate, trusting agents' serving certificates
// from the cluster CA only.
func kubeletTLS(pkiDir string, b *pki.Bundle) (*tls.Config, error) {
	certFile, keyFile, err := pki.EnsureKubeletClient(pkiDir, b)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(b.CA)
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: roots}, nil
}

// apiServerComponent is the API server's HTTPS serving, the first component
// started and the last stopped.
type apiServerComponent struct {
	serving *apiserver.Serving
	timeout time.Duration
}

func (a *apiServerComponent) Name() string { return "apiserver" }

// Run serves until ctx ends, then shuts down gracefully: open requests
// (watches included) get the shutdown timeout.
func (a *apiServerComponent) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
		defer cancel()
		return a.serving.Shutdown(sctx)
	case <-a.serving.Done():
		if err := a.serving.Err(); err != nil {
			return err
		}
		return errors.New("stopped serving")
	}
}
