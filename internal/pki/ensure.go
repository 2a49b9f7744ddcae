// Package pki creates and keeps the certificates, admin token and kubeconfig
// that dnsplane's HTTPS API server needs, in its data directory.
package pki

import (
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// File names inside the data directory, named as kubeadm names its own so
// that operators recognise them.
const (
	caCertName      = "ca.crt"
	caKeyName       = "ca.key"
	servingCertName = "apiserver.crt"
	servingKeyName  = "apiserver.key"
)

// Bundle is what the API server needs for TLS.
type Bundle struct {
	CACertPEM []byte
	CAFile    string
	// CAKeyFile is the CA's private key, with which the controllers' CSR
	// signer signs approved CertificateSigningRequests.
	CAKeyFile       string
	ServingCertFile string
	ServingKeyFile  string
	CA              *x509.Certificate

	caKey crypto.Signer
	opts  options
}

// options holds what tests need to change: the clock and validity periods.
type options struct {
	now             func() time.Time
	caValidity      time.Duration
	servingValidity time.Duration
	clientValidity  time.Duration
	// renewBefore regenerates a serving certificate this long before it
	// expires, so a server restarted in its last days does not start with a
	// certificate that lapses while it runs.
	renewBefore time.Duration
}

func defaultOptions() options {
	const year = 365 * 24 * time.Hour
	return options{
		now:             time.Now,
		caValidity:      10 * year,
		servingValidity: year,
		clientValidity:  year,
		renewBefore:     30 * 24 * time.Hour,
	}
}

// Ensure makes dir hold a CA and a serving certificate for hosts (DNS names
// and IP addresses, plus localhost, 127.0.0.1 and ::1), creating what is
// missing and reusing what is there. The serving certificate is regenerated
// when it is unreadable, not signed by the CA, expired or close to expiry, or
// does not cover every requested host; the CA is never replaced once it
// exists, because clients trust it, and an unusable CA is an error instead.
func Ensure(dir string, hosts []string) (*Bundle, error) {
	return ensure(dir, hosts, defaultOptions())
}

func ensure(dir string, hosts []string, o options) (*Bundle, error) {
	if dir == "" {
		return nil, errors.New("pki: data directory is empty")
	}
	sans, err := parseHosts(hosts)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki: create data directory: %w", err)
	}
	ca, err := ensureCA(dir, o)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	if err := ensureServing(dir, ca, sans, o); err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	return &Bundle{
		CACertPEM:       ca.certPEM,
		CAFile:          filepath.Join(dir, caCertName),
		CAKeyFile:       filepath.Join(dir, caKeyName),
		ServingCertFile: filepath.Join(dir, servingCertName),
		ServingKeyFile:  filepath.Join(dir, servingKeyName),
		CA:              ca.cert,
		caKey:           ca.key,
		opts:            o,
	}, nil
}

func ensureCA(dir string, o options) (keyPair, error) {
	return ensureCANamed(dir, "dnsplane-ca", o)
}

// ensureCANamed is ensureCA for a CA of common name cn (used only when it
// is created).
func ensureCANamed(dir, cn string, o options) (keyPair, error) {
	certPath, keyPath := filepath.Join(dir, caCertName), filepath.Join(dir, caKeyName)
	certPEM, err := os.ReadFile(certPath)
	if errors.Is(err, fs.ErrNotExist) {
		// A key without a certificate is what a crash between the two writes
		// below leaves; it was never trusted by anyone, so it is replaced.
		ca, err := newCANamed(cn, o.now(), o.caValidity)
		if err != nil {
			return keyPair{}, err
		}
		return ca, writePair(certPath, keyPath, ca)
	}
	if err != nil {
		return keyPair{}, fmt.Errorf("read CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return keyPair{}, fmt.Errorf("read CA key (the CA certificate %s exists, so the key is needed to issue certificates): %w", certPath, err)
	}
	ca, err := parseKeyPair(certPEM, keyPEM)
	if err != nil {
		return keyPair{}, fmt.Errorf("existing CA in %s is unusable (move %s and %s away to generate a new one): %w", dir, caCertName, caKeyName, err)
	}
	if !ca.cert.IsCA {
		return keyPair{}, fmt.Errorf("existing CA certificate %s is not a CA certificate", certPath)
	}
	if now := o.now(); now.After(ca.cert.NotAfter) {
		return keyPair{}, fmt.Errorf("existing CA certificate %s expired on %s (move %s and %s away to generate a new one)",
			certPath, ca.cert.NotAfter.UTC().Format(time.RFC3339), caCertName, caKeyName)
	}
	return ca, restrictMode(keyPath)
}

func ensureServing(dir string, ca keyPair, sans subjectAltNames, o options) error {
	certPath, keyPath := filepath.Join(dir, servingCertName), filepath.Join(dir, servingKeyName)
	if existing, err := loadPair(certPath, keyPath); err == nil && servingUsable(existing.cert, ca.cert, sans, o) {
		return restrictMode(keyPath)
	}
	serving, err := newServingCert(ca, sans, o.now(), o.servingValidity)
	if err != nil {
		return err
	}
	return writePair(certPath, keyPath, serving)
}

// servingUsable reports whether an existing serving certificate can be kept.
func servingUsable(cert, ca *x509.Certificate, sans subjectAltNames, o options) bool {
	now := o.now()
	switch {
	case cert.CheckSignatureFrom(ca) != nil:
		return false
	case now.Before(cert.NotBefore), now.Add(o.renewBefore).After(cert.NotAfter):
		return false
	case sans.missingFrom(cert.DNSNames, cert.IPAddresses) != "":
		return false
	}
	return true
}

func loadPair(certPath, keyPath string) (keyPair, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return keyPair{}, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return keyPair{}, err
	}
	return parseKeyPair(certPEM, keyPEM)
}

// writePair writes the key before the certificate: a crash in between leaves
// a certificate that does not match its key or no certificate at all, and
// both are detected and regenerated on the next start.
func writePair(certPath, keyPath string, kp keyPair) error {
	if err := writeFileAtomic(keyPath, kp.keyPEM, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certPath, kp.certPEM, 0o644)
}
