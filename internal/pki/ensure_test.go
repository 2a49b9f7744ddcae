package pki

import (
	"bytes"
	"crypto/x509"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fileState is what a call that must leave a file alone must not change.
type fileState struct {
	data    []byte
	mode    os.FileMode
	modTime time.Time
}

// snapshot records every file in dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]fileState)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fileState{data: data, mode: info.Mode().Perm(), modTime: info.ModTime()}
	}
	return out
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	kp, err := loadPair(path, strings.TrimSuffix(path, ".crt")+".key")
	if err != nil {
		t.Fatal(err)
	}
	return kp.cert
}

func TestEnsureIdempotent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // Ensure creates it
	hosts := []string{"dnsplane.example", "10.0.0.7"}
	first, err := Ensure(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	wantFiles := map[string]os.FileMode{caCertName: 0o644, caKeyName: 0o600, servingCertName: 0o644, servingKeyName: 0o600}
	if len(before) != len(wantFiles) {
		t.Fatalf("files = %v, want exactly %v", slices.Sorted(maps.Keys(before)), wantFiles)
	}
	for name, mode := range wantFiles {
		if before[name].mode != mode {
			t.Errorf("%s mode = %o, want %o", name, before[name].mode, mode)
		}
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode = %v (%v), want 0700", info.Mode().Perm(), err)
	}

	// Same hosts in another order and spelling need nothing new.
	second, err := Ensure(dir, []string{" 10.0.0.7", "DNSPLANE.example.", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.CACertPEM, second.CACertPEM) || !first.CA.Equal(second.CA) {
		t.Error("second Ensure returned a different CA")
	}
	after := snapshot(t, dir)
	for name, b := range before {
		a := after[name]
		if !bytes.Equal(a.data, b.data) || a.mode != b.mode || !a.modTime.Equal(b.modTime) {
			t.Errorf("%s changed on the second Ensure", name)
		}
	}
	if second.CAFile != filepath.Join(dir, "ca.crt") || second.ServingCertFile != filepath.Join(dir, "apiserver.crt") ||
		second.ServingKeyFile != filepath.Join(dir, "apiserver.key") {
		t.Errorf("paths = %q %q %q", second.CAFile, second.ServingCertFile, second.ServingKeyFile)
	}
}

func TestEnsureCertificates(t *testing.T) {
	dir := t.TempDir()
	b, err := Ensure(dir, []string{"api.dnsplane.example", "*.apps.example", "192.0.2.10", "[2001:db8::1]", ""})
	if err != nil {
		t.Fatal(err)
	}
	ca := b.CA
	if !ca.IsCA || !ca.BasicConstraintsValid || ca.MaxPathLen != 0 || !ca.MaxPathLenZero {
		t.Errorf("CA constraints: IsCA=%v MaxPathLen=%d", ca.IsCA, ca.MaxPathLen)
	}
	if got := ca.NotAfter.Sub(ca.NotBefore); got < 10*365*24*time.Hour || got > 10*366*24*time.Hour {
		t.Errorf("CA validity %v, want about 10 years", got)
	}
	serving := readCert(t, b.ServingCertFile)
	if got := serving.NotAfter.Sub(serving.NotBefore); got < 365*24*time.Hour || got > 366*24*time.Hour {
		t.Errorf("serving validity %v, want about 1 year", got)
	}
	if serving.PublicKeyAlgorithm != x509.ECDSA || ca.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithms %v, %v, want ECDSA", serving.PublicKeyAlgorithm, ca.PublicKeyAlgorithm)
	}
	wantDNS := []string{"localhost", "api.dnsplane.example", "*.apps.example"}
	if !slices.Equal(serving.DNSNames, wantDNS) {
		t.Errorf("DNS SANs = %q, want %q", serving.DNSNames, wantDNS)
	}
	wantIPs := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("192.0.2.10"), net.ParseIP("2001:db8::1")}
	if len(serving.IPAddresses) != len(wantIPs) {
		t.Fatalf("IP SANs = %v, want %v", serving.IPAddresses, wantIPs)
	}
	for i, ip := range wantIPs {
		if !serving.IPAddresses[i].Equal(ip) {
			t.Errorf("IP SAN %d = %v, want %v", i, serving.IPAddresses[i], ip)
		}
	}

	roots := x509.NewCertPool()
	roots.AddCert(ca)
	tests := []struct {
		host    string
		wantErr bool
	}{
		{host: "localhost"},
		{host: "127.0.0.1"},
		{host: "::1"},
		{host: "api.dnsplane.example"},
		{host: "web.apps.example"},
		{host: "192.0.2.10"},
		{host: "2001:db8::1"},
		{host: "other.example", wantErr: true},
		{host: "192.0.2.11", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			_, err := serving.Verify(x509.VerifyOptions{DNSName: tt.host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			if (err != nil) != tt.wantErr {
				t.Errorf("Verify(%s) error = %v, wantErr %v", tt.host, err, tt.wantErr)
			}
		})
	}
}

func TestEnsureRegeneratesServingCert(t *testing.T) {
	longAgo := func(o options) options {
		o.now = func() time.Time { return time.Now().Add(-2 * 365 * 24 * time.Hour) }
		return o
	}
	tests := []struct {
		name  string
		prep  func(t *testing.T, dir string) // runs after a first Ensure
		first func(options) options          // options of the first Ensure
		hosts []string                       // hosts of the second Ensure
	}{
		{name: "expired", first: longAgo},
		{name: "expires within the renewal window", first: func(o options) options {
			o.servingValidity = 10 * 24 * time.Hour
			return o
		}},
		{name: "new host requested", hosts: []string{"new.example"}},
		{name: "new IP requested", hosts: []string{"198.51.100.4"}},
		{name: "certificate missing", prep: func(t *testing.T, dir string) { t.Helper(); remove(t, dir, servingCertName) }},
		{name: "key missing", prep: func(t *testing.T, dir string) { t.Helper(); remove(t, dir, servingKeyName) }},
		{name: "certificate corrupt", prep: func(t *testing.T, dir string) { t.Helper(); write(t, dir, servingCertName, "garbage") }},
		{name: "key from another pair", prep: func(t *testing.T, dir string) {
			t.Helper()
			other, err := Ensure(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			key, err := os.ReadFile(other.ServingKeyFile)
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, servingKeyName, string(key))
		}},
		{name: "signed by another CA", prep: func(t *testing.T, dir string) {
			t.Helper()
			other, err := Ensure(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{other.ServingCertFile, other.ServingKeyFile} {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				write(t, dir, filepath.Base(f), string(data))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o := defaultOptions()
			if tt.first != nil {
				o = tt.first(o)
			}
			first, err := ensure(dir, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			oldServing, _ := os.ReadFile(first.ServingCertFile)
			if tt.prep != nil {
				tt.prep(t, dir)
			}
			second, err := Ensure(dir, tt.hosts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.CACertPEM, second.CACertPEM) {
				t.Fatal("the CA was replaced")
			}
			newServing, _ := os.ReadFile(second.ServingCertFile)
			if bytes.Equal(oldServing, newServing) {
				t.Fatal("the serving certificate was not regenerated")
			}
			cert := readCert(t, second.ServingCertFile)
			if err := cert.CheckSignatureFrom(second.CA); err != nil {
				t.Errorf("new serving certificate not signed by the CA: %v", err)
			}
			if now := time.Now(); now.Before(cert.NotBefore) || now.Add(300*24*time.Hour).After(cert.NotAfter) {
				t.Errorf("new serving certificate valid %v to %v", cert.NotBefore, cert.NotAfter)
			}
			for _, h := range tt.hosts {
				if err := cert.VerifyHostname(h); err != nil {
					t.Errorf("new serving certificate: %v", err)
				}
			}
			if info, err := os.Stat(second.ServingKeyFile); err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("serving key mode %v (%v), want 0600", info.Mode().Perm(), err)
			}
		})
	}
}

func TestEnsureCAProblems(t *testing.T) {
	tests := []struct {
		name    string
		prep    func(t *testing.T, dir string) // runs after a first Ensure
		wantErr string
		wantNew bool // a fresh CA is expected instead of an error
	}{
		{name: "key missing", prep: func(t *testing.T, dir string) { t.Helper(); remove(t, dir, caKeyName) },
			wantErr: "read CA key"},
		{name: "certificate corrupt", prep: func(t *testing.T, dir string) { t.Helper(); write(t, dir, caCertName, "garbage") },
			wantErr: "is unusable (move ca.crt and ca.key away to generate a new one)"},
		{name: "key does not match", prep: func(t *testing.T, dir string) {
			t.Helper()
			data, err := os.ReadFile(filepath.Join(dir, servingKeyName))
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, caKeyName, string(data))
		}, wantErr: "private key does not match public key"},
		{name: "not a CA", prep: func(t *testing.T, dir string) {
			t.Helper()
			for _, n := range []string{servingCertName, servingKeyName} {
				data, err := os.ReadFile(filepath.Join(dir, n))
				if err != nil {
					t.Fatal(err)
				}
				write(t, dir, strings.Replace(n, "apiserver", "ca", 1), string(data))
			}
		}, wantErr: "is not a CA certificate"},
		{name: "a key without its certificate is replaced", prep: func(t *testing.T, dir string) { t.Helper(); remove(t, dir, caCertName) },
			wantNew: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			first, err := Ensure(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			tt.prep(t, dir)
			second, err := Ensure(dir, nil)
			if tt.wantNew {
				if err != nil {
					t.Fatal(err)
				}
				if first.CA.Equal(second.CA) {
					t.Fatal("CA was not regenerated")
				}
				if err := readCert(t, second.ServingCertFile).CheckSignatureFrom(second.CA); err != nil {
					t.Fatalf("serving certificate not reissued by the new CA: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestEnsureExpiredCA(t *testing.T) {
	dir := t.TempDir()
	o := defaultOptions()
	o.caValidity = time.Hour
	o.now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
	if _, err := ensure(dir, nil, o); err != nil {
		t.Fatal(err)
	}
	_, err := Ensure(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "expired on") {
		t.Fatalf("error = %v, want an expired CA error", err)
	}
}

func TestEnsureRestrictsKeyModes(t *testing.T) {
	dir := t.TempDir()
	if _, err := Ensure(dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{caKeyName, servingKeyName} {
		if err := os.Chmod(filepath.Join(dir, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Ensure(dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{caKeyName, servingKeyName} {
		if info, err := os.Stat(filepath.Join(dir, n)); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v (%v), want 0600", n, info.Mode().Perm(), err)
		}
	}
}

func TestEnsureRejectsBadHosts(t *testing.T) {
	for _, h := range []string{"host:6443", "https://host", "bad_name.example", "-lead.example", "a..b", "*", "x.*.example", strings.Repeat("a", 64) + ".example"} {
		t.Run(h, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Ensure(dir, []string{h})
			if err == nil || !strings.Contains(err.Error(), "is neither an IP address nor a DNS name") {
				t.Fatalf("error = %v", err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a failed Ensure wrote %d files", len(entries))
			}
		})
	}
	if _, err := Ensure("", nil); err == nil {
		t.Error("Ensure with an empty directory succeeded")
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
