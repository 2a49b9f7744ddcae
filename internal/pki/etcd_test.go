package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEnsureEtcd: kubeadm's layout, owner-only keys and directories, a
// chain to the etcd CA (not the cluster CA), and a second call that keeps
// what is there.
func TestEnsureEtcd(t *testing.T) {
	t.Parallel()
	pkiDir := filepath.Join(t.TempDir(), "pki")
	if err := os.MkdirAll(pkiDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cluster, err := Ensure(pkiDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := EnsureEtcd(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, want string }{
		{p.CAFile, "pki/etcd/ca.crt"},
		{p.ServerCertFile, "pki/etcd/server.crt"},
		{p.PeerCertFile, "pki/etcd/peer.crt"},
		{p.ClientCertFile, "pki/apiserver-etcd-client.crt"},
		{p.ClientKeyFile, "pki/apiserver-etcd-client.key"},
	} {
		if rel, _ := filepath.Rel(filepath.Dir(pkiDir), f.path); rel != f.want {
			t.Errorf("file %s, want %s", rel, f.want)
		}
	}
	for _, key := range []string{p.ServerKeyFile, p.PeerKeyFile, p.ClientKeyFile, filepath.Join(pkiDir, "etcd", "ca.key")} {
		if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", key, err, fi.Mode().Perm())
		}
	}
	for _, dir := range []string{pkiDir, filepath.Join(pkiDir, "etcd")} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, mode %v; want 0700", dir, err, fi.Mode().Perm())
		}
	}
	ca := loadCert(t, p.CAFile)
	if ca.Subject.CommonName != "etcd-ca" || !ca.IsCA {
		t.Errorf("etcd CA %q (IsCA %v), want etcd-ca", ca.Subject.CommonName, ca.IsCA)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	clusterRoots := x509.NewCertPool()
	clusterRoots.AddCert(cluster.CA)
	for _, tt := range []struct {
		file  string
		cn    string
		usage x509.ExtKeyUsage
		host  string
	}{
		{p.ServerCertFile, "dnsplane", x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{p.PeerCertFile, "dnsplane", x509.ExtKeyUsageServerAuth, "localhost"},
		{p.ServerCertFile, "dnsplane", x509.ExtKeyUsageClientAuth, ""},
		{p.ClientCertFile, "kube-apiserver-etcd-client", x509.ExtKeyUsageClientAuth, ""},
	} {
		c := loadCert(t, tt.file)
		if c.Subject.CommonName != tt.cn {
			t.Errorf("%s: CN %q, want %q", tt.file, c.Subject.CommonName, tt.cn)
		}
		opts := x509.VerifyOptions{Roots: roots, DNSName: tt.host, KeyUsages: []x509.ExtKeyUsage{tt.usage}}
		if _, err := c.Verify(opts); err != nil {
			t.Errorf("%s for %v %q: %v", tt.file, tt.usage, tt.host, err)
		}
		opts.Roots = clusterRoots
		if _, err := c.Verify(opts); err == nil {
			t.Errorf("%s verifies against the cluster CA; want etcd's own CA only", tt.file)
		}
	}

	before := readAll(t, p)
	if _, err := EnsureEtcd(pkiDir); err != nil {
		t.Fatal(err)
	}
	if after := readAll(t, p); !bytes.Equal(before, after) {
		t.Error("a second EnsureEtcd replaced usable certificates")
	}
}

// TestEnsureEtcdRenews: leaves close to expiry are replaced, the CA kept.
func TestEnsureEtcdRenews(t *testing.T) {
	t.Parallel()
	pkiDir := t.TempDir()
	o := defaultOptions()
	p, err := ensureEtcd(pkiDir, o)
	if err != nil {
		t.Fatal(err)
	}
	caBefore, clientBefore := readFile(t, p.CAFile), readFile(t, p.ClientCertFile)
	o.now = func() time.Time { return time.Now().Add(360 * 24 * time.Hour) }
	if _, err := ensureEtcd(pkiDir, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(caBefore, readFile(t, p.CAFile)) {
		t.Error("CA replaced")
	}
	if bytes.Equal(clientBefore, readFile(t, p.ClientCertFile)) {
		t.Error("client certificate close to expiry kept")
	}
}

func loadCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(readFile(t, path))
	if block == nil {
		t.Fatalf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readAll(t *testing.T, p *EtcdPKI) []byte {
	t.Helper()
	var all []byte
	for _, f := range []string{p.CAFile, p.ServerCertFile, p.ServerKeyFile, p.PeerCertFile, p.PeerKeyFile, p.ClientCertFile, p.ClientKeyFile} {
		all = append(all, readFile(t, f)...)
	}
	return all
}
