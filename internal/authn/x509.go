package authn

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// X509 authenticates client certificates that the TLS layer has verified
// against the client CA: the user is the subject's common name and the groups
// are its organizations, as in kube-apiserver. It relies on the server's
// tls.Config doing the chain verification (ClientCAs with
// VerifyClientCertIfGiven or RequireAndVerifyClientCert).
type X509 struct{}

// Authenticate implements Authenticator.
func (X509) Authenticate(r *http.Request) (User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return User{}, false, nil
	}
	// A certificate the handshake did not verify (a server configured with
	// RequestClientCert) must never be trusted, but the client did present
	// credentials, so it fails rather than passing as anonymous.
	if len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return User{}, false, errors.New("x509: client certificate was not verified against the client CA")
	}
	chain := r.TLS.VerifiedChains[0]
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
