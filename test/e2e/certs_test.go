package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// keyPair is a PEM certificate and its PEM (PKCS #8) key.
type keyPair struct {
	cert *x509.Certificate
	key  crypto.Signer
	// CertPEM and KeyPEM are the encoded forms.
	CertPEM, KeyPEM []byte
}

// loadCA reads the CA the server generated into its data dir.
func loadCA(t *testing.T, dataDir string) keyPair {
	t.Helper()
	certPEM := []byte(readFile(t, filepath.Join(dataDir, "pki", "ca.crt")))
	keyPEM := []byte(readFile(t, filepath.Join(dataDir, "pki", "ca.key")))
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		t.Fatalf("no PEM in %s/pki/ca.{crt,key}", dataDir)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		t.Fatalf("CA key is a %T", key)
	}
	return keyPair{cert: cert, key: signer, CertPEM: certPEM, KeyPEM: keyPEM}
}

// newCert issues a certificate: a CA when parent is nil (self-signed), else
// a client certificate for cn in the groups orgs signed by parent.
func newCert(t *testing.T, parent *keyPair, cn string, orgs ...string) keyPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
	}
	signerCert, signerKey := tmpl, crypto.Signer(key)
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{cert: cert, key: key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
}

// kubeconfigWithUser writes a copy of kubeconfig whose user credentials are
// replaced by user, and returns its path.
func kubeconfigWithUser(t *testing.T, kubeconfig string, user *clientcmdapi.AuthInfo) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		t.Fatalf("%s: no current context", kubeconfig)
	}
	cfg.AuthInfos[ctx.AuthInfo] = user
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
