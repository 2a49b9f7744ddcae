package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ServiceAccountKeyName is the key that signs service account tokens, in
// the PKI dir: kube-apiserver's --service-account-signing-key-file (and,
// its public half, --service-account-key-file).
const ServiceAccountKeyName = "sa.key"

// EnsureServiceAccountKey returns the key that signs service account
// tokens (serviceaccounts/token), creating an ECDSA P-256 key in dir the
// first time. An existing key is kept (tokens it signed stay valid across
// restarts); one that does not parse, or is not ECDSA or RSA, is an error,
// never replaced.
func EnsureServiceAccountKey(dir string) (crypto.Signer, error) {
	path := filepath.Join(dir, ServiceAccountKeyName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generate service account key: %w", err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("encode service account key: %w", err)
		}
		if err := writeFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read service account key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("service account key %s: no PEM block (move it away to generate a new one)", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("service account key %s: %w (move it away to generate a new one)", path, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return k, restrictMode(path)
	case *rsa.PrivateKey:
		return k, restrictMode(path)
	}
	return nil, fmt.Errorf("service account key %s: a %T, want ECDSA or RSA (move it away to generate a new one)", path, key)
}
