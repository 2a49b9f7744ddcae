package pki

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The embedded etcd's PKI, laid out and named as kubeadm lays out a stacked
// etcd's (kubeadm's "PKI certificates and requirements"): its own CA under
// pki/etcd, a server and a peer certificate for the member, and one client
// certificate, pki/apiserver-etcd-client, that only the API server loads.
// etcd requires a client certificate from its CA on both its client and its
// peer URLs (--client-cert-auth, --peer-client-cert-auth), so a process
// that can reach etcd's loopback port but cannot read the 0700 data dir
// cannot talk to it (docs/architecture.md, "Storage").
const (
	etcdDirName             = "etcd"
	etcdCACommonName        = "etcd-ca"
	etcdMemberCommonName    = "dnsplane" // the member's name (storage.StartEmbedded)
	etcdServerName          = "server"
	etcdPeerName            = "peer"
	apiserverEtcdClient     = "apiserver-etcd-client"
	apiserverEtcdClientCN   = "kube-apiserver-etcd-client"
	etcdCertExt, etcdKeyExt = ".crt", ".key"
)

// EtcdPKI names the embedded etcd's certificate files.
type EtcdPKI struct {
	// CAFile is pki/etcd/ca.crt: etcd trusts client and peer certificates
	// it signed (--trusted-ca-file, --peer-trusted-ca-file), and clients
	// verify etcd's server certificate with it.
	CAFile string
	// ServerCertFile and ServerKeyFile are etcd's serving certificate on
	// its client URL (SANs localhost, 127.0.0.1, ::1).
	ServerCertFile, ServerKeyFile string
	// PeerCertFile and PeerKeyFile are its certificate on the peer URL.
	PeerCertFile, PeerKeyFile string
	// ClientCertFile and ClientKeyFile are pki/apiserver-etcd-client.crt
	// and .key, CN kube-apiserver-etcd-client: the only client identity.
	ClientCertFile, ClientKeyFile string
}

// EnsureEtcd makes pkiDir hold the embedded etcd's CA and certificates,
// creating what is missing, reusing what is usable and regenerating the
// leaves that are not (expired or close to it, not signed by the etcd CA,
// or for the wrong names). Keys are 0600, directories 0700.
func EnsureEtcd(pkiDir string) (*EtcdPKI, error) {
	return ensureEtcd(pkiDir, defaultOptions())
}

func ensureEtcd(pkiDir string, o options) (*EtcdPKI, error) {
	if pkiDir == "" {
		return nil, errors.New("pki: etcd: directory is empty")
	}
	etcdDir := filepath.Join(pkiDir, etcdDirName)
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return nil, fmt.Errorf("pki: etcd: %w", err)
	}
	for _, d := range []string{pkiDir, etcdDir} {
		// An existing pki dir (from an older dnsplane, or restored from a
		// backup) may be group- or world-listable.
		if err := restrictMode(d); err != nil {
			return nil, fmt.Errorf("pki: etcd: %w", err)
		}
	}
	ca, err := ensureCANamed(etcdDir, etcdCACommonName, o)
	if err != nil {
		return nil, fmt.Errorf("pki: etcd: %w", err)
	}
	sans, err := parseHosts(nil)
	if err != nil {
		return nil, fmt.Errorf("pki: etcd: %w", err)
	}
	p := &EtcdPKI{
		CAFile:         filepath.Join(etcdDir, caCertName),
		ServerCertFile: filepath.Join(etcdDir, etcdServerName+etcdCertExt),
		ServerKeyFile:  filepath.Join(etcdDir, etcdServerName+etcdKeyExt),
		PeerCertFile:   filepath.Join(etcdDir, etcdPeerName+etcdCertExt),
		PeerKeyFile:    filepath.Join(etcdDir, etcdPeerName+etcdKeyExt),
		ClientCertFile: filepath.Join(pkiDir, apiserverEtcdClient+etcdCertExt),
		ClientKeyFile:  filepath.Join(pkiDir, apiserverEtcdClient+etcdKeyExt),
	}
	member := func() (keyPair, error) { return newEtcdMemberCert(ca, sans, o.now(), o.servingValidity) }
	memberUsable := func(c *x509.Certificate) bool {
		return servingUsable(c, ca.cert, sans, o) && hasUsages(c, memberUsages)
	}
	client := func() (keyPair, error) {
		return newClientCert(ca, apiserverEtcdClientCN, nil, o.now(), o.clientValidity)
	}
	clientUsable := func(c *x509.Certificate) bool {
		return c.Subject.CommonName == apiserverEtcdClientCN && leafCurrent(c, ca.cert, o) && hasUsages(c, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	}
	for _, leaf := range []struct {
		cert, key string
		usable    func(*x509.Certificate) bool
		mint      func() (keyPair, error)
	}{
		{p.ServerCertFile, p.ServerKeyFile, memberUsable, member},
		{p.PeerCertFile, p.PeerKeyFile, memberUsable, member},
		{p.ClientCertFile, p.ClientKeyFile, clientUsable, client},
	} {
		if err := ensureLeaf(leaf.cert, leaf.key, leaf.usable, leaf.mint); err != nil {
			return nil, fmt.Errorf("pki: etcd: %w", err)
		}
	}
	return p, nil
}

// memberUsages are kubeadm's for etcd's server and peer certificates: a
// member is a TLS client of its peers too.
var memberUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}

func newEtcdMemberCert(ca keyPair, sans subjectAltNames, now time.Time, validity time.Duration) (keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: etcdMemberCommonName},
		NotBefore:   now.Add(-clockSkew),
		NotAfter:    notAfter(ca.cert, now.Add(validity)),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: memberUsages,
		DNSNames:    sans.dnsNames,
		IPAddresses: sans.ips,
	}
	return issue(tmpl, ca.cert, ca.key)
}

// ensureLeaf keeps the certificate at certPath when usable says so, and
// otherwise writes a new one from mint.
func ensureLeaf(certPath, keyPath string, usable func(*x509.Certificate) bool, mint func() (keyPair, error)) error {
	if existing, err := loadPair(certPath, keyPath); err == nil && usable(existing.cert) {
		return restrictMode(keyPath)
	}
	kp, err := mint()
	if err != nil {
		return err
	}
	return writePair(certPath, keyPath, kp)
}

// leafCurrent: signed by ca, already valid and not close to expiry.
func leafCurrent(cert, ca *x509.Certificate, o options) bool {
	now := o.now()
	return cert.CheckSignatureFrom(ca) == nil && !now.Before(cert.NotBefore) && !now.Add(o.renewBefore).After(cert.NotAfter)
}

func hasUsages(cert *x509.Certificate, want []x509.ExtKeyUsage) bool {
	for _, u := range want {
		if !slices.Contains(cert.ExtKeyUsage, u) {
			return false
		}
	}
	return true
}
