package storage

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestStoreExternal runs the store cases against a separate etcd process reached over
// mutual TLS through Connect: the --etcd-servers code path.
func TestStoreExternal(t *testing.T) {
	t.Parallel()
	etcdBin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd binary not installed: apt-get install etcd-server")
	}
	dir := t.TempDir()
	pki := writeTestPKI(t, dir)
	clientURL := "https://127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	peerURL := "http://127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))

	var stderr testkit.Buffer
	cmd := exec.Command(etcdBin,
		"--name", "ext",
		"--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", clientURL,
		"--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "ext="+peerURL,
		"--cert-file", pki.serverCert,
		"--key-file", pki.serverKey,
		"--trusted-ca-file", pki.ca,
		"--client-cert-auth",
		"--logger", "zap",
		"--log-outputs", "stderr",
		"--log-level", "error",
	)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})

	ctx := testCtx(t)
	client, err := Connect(ctx, ClientConfig{
		Endpoints:   []string{clientURL},
		CAFile:      pki.ca,
		CertFile:    pki.clientCert,
		KeyFile:     pki.clientKey,
		DialTimeout: 15 * time.Second,
	})
	if err != nil {
		t.Fatalf("connecting to external etcd: %v\netcd stderr:\n%s", err, stderr.String())
	}
	defer client.Close()

	t.Run("NoClientCertRefused", func(t *testing.T) {
		c, err := Connect(ctx, ClientConfig{Endpoints: []string{clientURL}, CAFile: pki.ca, DialTimeout: time.Second})
		if err == nil {
			c.Close()
			t.Fatal("connected without a client certificate to an etcd requiring one")
		}
	})
	runStoreCases(t, client)
}

type testPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

// writeTestPKI writes a CA, a server certificate for 127.0.0.1 and a client certificate.
func writeTestPKI(t *testing.T, dir string) testPKI {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	writeKey := func(name string, k *ecdsa.PrivateKey) string {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name, "PRIVATE KEY", der)
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test etcd CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	serverDER, serverKey := leaf(2, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	clientDER, clientKey := leaf(3, "dnsplane", x509.ExtKeyUsageClientAuth)
	return testPKI{
		ca:         write("ca.pem", "CERTIFICATE", caDER),
		serverCert: write("server.pem", "CERTIFICATE", serverDER),
		serverKey:  writeKey("server-key.pem", serverKey),
		clientCert: write("client.pem", "CERTIFICATE", clientDER),
		clientKey:  writeKey("client-key.pem", clientKey),
	}
}
