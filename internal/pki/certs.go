package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// clockSkew backdates NotBefore so that a client whose clock is slightly
// behind the server's does not reject a certificate minted at startup.
const clockSkew = 5 * time.Minute

// keyPair is a certificate with its private key, in parsed and PEM form.
type keyPair struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// newCANamed is a CA whose common name says which trust domain it roots:
// etcd has its own CA ("etcd-ca", as kubeadm names it), so that nothing the
// cluster CA signs is accepted by etcd.
func newCANamed(cn string, now time.Time, validity time.Duration) (keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// The CA signs leaf certificates only; an intermediate minted with a
		// stolen leaf key would otherwise be accepted.
		MaxPathLen:     0,
		MaxPathLenZero: true,
	}
	return issue(tmpl, nil, nil)
}

func newServingCert(ca keyPair, sans subjectAltNames, now time.Time, validity time.Duration) (keyPair, error) {
	return newServingCertFor(ca, "dnsplane-apiserver", sans, now, validity)
}

// newServingCertFor is a serving certificate whose common name says whose
// it is.
func newServingCertFor(ca keyPair, cn string, sans subjectAltNames, now time.Time, validity time.Duration) (keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   now.Add(-clockSkew),
		NotAfter:    notAfter(ca.cert, now.Add(validity)),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    sans.dnsNames,
		IPAddresses: sans.ips,
	}
	return issue(tmpl, ca.cert, ca.key)
}

// newClientCert follows kube's convention for client certificates: the
// common name is the user name and each organization is a group.
func newClientCert(ca keyPair, user string, groups []string, now time.Time, validity time.Duration) (keyPair, error) {
	subject := pkix.Name{CommonName: user}
	// One RDN per group, as openssl -subj "/O=a/O=b" writes them: Go would
	// put Organization values into a single multi-valued RDN, a DER SET whose
	// encoding sorts them, and the groups would come back reordered.
	for _, g := range groups {
		organizationName := asn1.ObjectIdentifier{2, 5, 4, 10} // X.520
		subject.ExtraNames = append(subject.ExtraNames, pkix.AttributeTypeAndValue{Type: organizationName, Value: g})
	}
	tmpl := &x509.Certificate{
		Subject:     subject,
		NotBefore:   now.Add(-clockSkew),
		NotAfter:    notAfter(ca.cert, now.Add(validity)),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return issue(tmpl, ca.cert, ca.key)
}

// notAfter keeps a leaf from outliving its CA, after which it could not be
// verified anyway.
func notAfter(ca *x509.Certificate, want time.Time) time.Time {
	if want.After(ca.NotAfter) {
		return ca.NotAfter
	}
	return want
}

// issue creates a fresh P-256 key and a certificate for it from tmpl, signed
// by parent and parentKey, or self-signed when parent is nil.
func issue(tmpl, parent *x509.Certificate, parentKey crypto.Signer) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate key for %q: %w", tmpl.Subject.CommonName, err)
	}
	// 128 random bits: RFC 5280 allows up to 20 octets, and random serials
	// keep two certificates from the same CA distinct across regenerations.
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return keyPair{}, fmt.Errorf("generate serial for %q: %w", tmpl.Subject.CommonName, err)
	}
	tmpl.SerialNumber = serial
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("create certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, fmt.Errorf("parse new certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return keyPair{}, fmt.Errorf("encode key for %q: %w", tmpl.Subject.CommonName, err)
	}
	return keyPair{
		cert:    cert,
		key:     key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// parseKeyPair decodes a certificate and its key, accepting any key encoding
// crypto/tls does (PKCS#8, SEC 1, PKCS#1), and checks that they belong
// together.
func parseKeyPair(certPEM, keyPEM []byte) (keyPair, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return keyPair{}, err
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return keyPair{}, errors.New("private key cannot sign")
	}
	cert := pair.Leaf
	if cert == nil {
		if cert, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return keyPair{}, err
		}
	}
	return keyPair{cert: cert, key: signer, certPEM: certPEM, keyPEM: keyPEM}, nil
}
