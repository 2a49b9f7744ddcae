package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"slices"
	"testing"
)

func TestEnsureKubeletClientAndAgentServing(t *testing.T) {
	dir := t.TempDir()
	b, err := Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(b.CA)

	certFile, keyFile, err := EnsureKubeletClient(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	leaf := pair.Leaf
	if leaf.Subject.CommonName != KubeletClientUser || !slices.Equal(organizations(leaf.Subject), []string{KubeletClientGroup}) {
		t.Errorf("subject %v", leaf.Subject)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	// Kept on the next call.
	before, _ := os.ReadFile(certFile)
	if _, _, err := EnsureKubeletClient(dir, b); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(certFile); string(after) != string(before) {
		t.Error("a usable kubelet client certificate was replaced")
	}

	certFile, keyFile, err = EnsureAgentServing(dir, b, []string{"node-1", "10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}
	pair, err = tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	leaf = pair.Leaf
	if leaf.Subject.CommonName != "dnsplane-agent" {
		t.Errorf("CN %q", leaf.Subject.CommonName)
	}
	for _, host := range []string{"node-1", "10.0.0.5", "127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("serving certificate for %s: %v", host, err)
		}
	}
	if !slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.Equal(net.ParseIP("10.0.0.5")) }) {
		t.Errorf("IPs %v", leaf.IPAddresses)
	}
	before, _ = os.ReadFile(certFile)
	if _, _, err := EnsureAgentServing(dir, b, []string{"node-1"}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(certFile); string(after) != string(before) {
		t.Error("a serving certificate covering the hosts was replaced")
	}
	if _, _, err := EnsureAgentServing(dir, b, []string{"node-2"}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(certFile); string(after) == string(before) {
		t.Error("a serving certificate missing a host was kept")
	}
}
