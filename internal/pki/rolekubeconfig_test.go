package pki

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestWriteRoleKubeconfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := Ensure(filepath.Join(dir, "pki"), nil)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(b.CA)
	for _, tc := range []struct {
		name   string
		user   string
		groups []string
	}{
		{"node", NodeUserPrefix + "node-1", []string{NodesGroup}},
		{"scheduler", SchedulerUser, nil},
		{"operator", "system:dnsplane:dns-operator", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, tc.name, "kubeconfig")
			if err := WriteRoleKubeconfig(path, "https://127.0.0.1:6443", b, tc.user, tc.groups); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", info.Mode().Perm())
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != "https://127.0.0.1:6443" || string(cfg.CAData) != string(b.CACertPEM) {
				t.Errorf("server %q, CA %d bytes", cfg.Host, len(cfg.CAData))
			}
			block, _ := pem.Decode(cfg.CertData)
			if block == nil {
				t.Fatal("no client certificate in the kubeconfig")
			}
			leaf, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if leaf.Subject.CommonName != tc.user || !slices.Equal(organizations(leaf.Subject), tc.groups) {
				t.Errorf("subject %v, want CN %q O %q", leaf.Subject, tc.user, tc.groups)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("client certificate: %v", err)
			}
		})
	}
}

func TestWriteRoleKubeconfigRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"no user":  func() error { return WriteRoleKubeconfig(filepath.Join(dir, "a"), "https://127.0.0.1:1", b, "", nil) },
		"http URL": func() error { return WriteRoleKubeconfig(filepath.Join(dir, "b"), "http://127.0.0.1:1", b, "u", nil) },
		"no bundle": func() error {
			return WriteRoleKubeconfig(filepath.Join(dir, "c"), "https://127.0.0.1:1", nil, "u", nil)
		},
	} {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
