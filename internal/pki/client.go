package pki

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// IssueClientCert writes <dir>/<name>.crt and <dir>/<name>.key: a new client
// certificate for user in groups, signed by the CA, which the API server's
// X509 authenticator maps back to that user and those groups. Each call
// issues a fresh key and certificate, replacing earlier files of that name.
func (b *Bundle) IssueClientCert(dir, name string, user string, groups []string) (certFile, keyFile string, err error) {
	if b.caKey == nil {
		return "", "", errors.New("pki: bundle has no CA key; create it with Ensure")
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "", "", fmt.Errorf("pki: client certificate name %q must be a plain file name", name)
	}
	// kube ignores a certificate without a common name, so it would
	// authenticate nobody.
	if user == "" {
		return "", "", errors.New("pki: client certificate needs a user name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("pki: create directory for client certificate: %w", err)
	}
	ca := keyPair{cert: b.CA, key: b.caKey}
	kp, err := newClientCert(ca, user, groups, b.opts.now(), b.opts.clientValidity)
	if err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := writePair(certFile, keyFile, kp); err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	return certFile, keyFile, nil
}
