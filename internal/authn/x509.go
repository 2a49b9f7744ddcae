package authn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// X509 authenticates client certificates that chain to Roots: the user is
// the subject's common name and the groups are its organizations, as in
// kube-apiserver. The TLS layer only requests certificates
// (tls.RequestClientCert), so a certificate from another CA reaches this
// point and is answered with 401, as upstream, instead of failing the
// handshake. Chains the TLS layer already verified are used as they are.
type X509 struct {
	Roots *x509.CertPool
}

// Authenticate implements Authenticator.
func (a X509) Authenticate(r *http.Request) (User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return User{}, false, nil
	}
	chain, err := a.chain(r.TLS)
	if err != nil {
		// The client did present credentials: a certificate that does not
		// verify fails rather than passing as anonymous.
		return User{}, false, err
	}
	// The handshake checked validity when the connection opened; a
	// keep-alive connection can outlive the certificate, and kube re-checks
	// on every request.
	now := time.Now()
	for _, c := range chain {
		if now.Before(c.NotBefore) || now.After(c.NotAfter) {
			return User{}, false, fmt.Errorf("x509: certificate %q is outside its validity period %s to %s",
				c.Subject.CommonName, c.NotBefore.UTC().Format(time.RFC3339), c.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	leaf := chain[0]
	// kube treats a certificate without a common name as carrying no user.
	if leaf.Subject.CommonName == "" {
		return User{}, false, nil
	}
	return User{Name: leaf.Subject.CommonName, Groups: slices.Clone(leaf.Subject.Organization)}, true, nil
}

// chain returns the verified chain of the client certificate.
func (a X509) chain(cs *tls.ConnectionState) ([]*x509.Certificate, error) {
	if len(cs.VerifiedChains) > 0 && len(cs.VerifiedChains[0]) > 0 {
		return cs.VerifiedChains[0], nil
	}
	if a.Roots == nil {
		return nil, errors.New("x509: client certificate was not verified against the client CA")
	}
	intermediates := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		intermediates.AddCert(c)
	}
	chains, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         a.Roots,
		Intermediates: intermediates,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("x509: verifying client certificate %q: %w", cs.PeerCertificates[0].Subject.CommonName, err)
	}
	return chains[0], nil
}
