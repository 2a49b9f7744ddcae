package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestServerTLSConfig(t *testing.T) {
	b, err := Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := b.ServerTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.ClientAuth != tls.RequestClientCert ||
		!slices.Equal(cfg.NextProtos, []string{"h2", "http/1.1"}) || len(cfg.Certificates) != 1 || cfg.ClientCAs == nil {
		t.Errorf("unexpected config: MinVersion=%x ClientAuth=%v NextProtos=%q certs=%d", cfg.MinVersion, cfg.ClientAuth, cfg.NextProtos, len(cfg.Certificates))
	}
	os.Remove(b.ServingKeyFile)
	if _, err := b.ServerTLSConfig(); err == nil || !strings.Contains(err.Error(), "load serving certificate") {
		t.Errorf("error with the key missing = %v", err)
	}
}

// peer is what the test server saw of the client's certificate.
type peer struct {
	Verified bool
	CN       string
	O        []string
	Proto    string
}

func newPeerServer(t *testing.T, b *Bundle) *httptest.Server {
	t.Helper()
	cfg, err := b.ServerTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := peer{Proto: r.Proto}
		// The TLS layer only requests client certificates; verify as the
		// API server's authenticator does.
		if certs := r.TLS.PeerCertificates; len(certs) > 0 {
			roots := x509.NewCertPool()
			roots.AddCert(b.CA)
			if chains, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
				p.Verified, p.CN, p.O = true, chains[0][0].Subject.CommonName, chains[0][0].Subject.Organization
			}
		}
		_ = json.NewEncoder(w).Encode(p)
	}))
	srv.TLS = cfg
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestIssueClientCertAccepted(t *testing.T) {
	b, err := Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := newPeerServer(t, b)
	certDir := filepath.Join(t.TempDir(), "certs")
	tests := []struct {
		name, file, user string
		groups           []string
	}{
		{name: "admin", file: "admin", user: "admin", groups: []string{"system:masters"}},
		{name: "groups keep their order", file: "dev", user: "jane", groups: []string{"zeta", "alpha", "mid"}},
		{name: "no groups", file: "plain", user: "bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certFile, keyFile, err := b.IssueClientCert(certDir, tt.file, tt.user, tt.groups)
			if err != nil {
				t.Fatal(err)
			}
			if certFile != filepath.Join(certDir, tt.file+".crt") || keyFile != filepath.Join(certDir, tt.file+".key") {
				t.Errorf("files %s %s", certFile, keyFile)
			}
			if info, err := os.Stat(keyFile); err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("key mode %v (%v), want 0600", info.Mode().Perm(), err)
			}
			cert := readCert(t, certFile)
			if !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || cert.IsCA {
				t.Errorf("ExtKeyUsage = %v, IsCA = %v", cert.ExtKeyUsage, cert.IsCA)
			}

			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			roots := x509.NewCertPool()
			roots.AddCert(b.CA)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}, ForceAttemptHTTP2: true}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var got peer
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("decode %q: %v", body, err)
			}
			want := peer{Verified: true, CN: tt.user, O: tt.groups, Proto: "HTTP/2.0"}
			if got.Verified != want.Verified || got.CN != want.CN || !slices.Equal(got.O, want.O) || got.Proto != want.Proto {
				t.Errorf("server saw %+v, want %+v", got, want)
			}
		})
	}
}

func TestIssueClientCertRejectsBadInput(t *testing.T) {
	b, err := Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests := []struct {
		name, file, user string
		bundle           *Bundle
		wantErr          string
	}{
		{name: "empty name", file: "", user: "u", bundle: b, wantErr: "must be a plain file name"},
		{name: "path in name", file: "../x", user: "u", bundle: b, wantErr: "must be a plain file name"},
		{name: "dot dot", file: "..", user: "u", bundle: b, wantErr: "must be a plain file name"},
		{name: "empty user", file: "x", user: "", bundle: b, wantErr: "needs a user name"},
		{name: "bundle not from Ensure", file: "x", user: "u", bundle: &Bundle{CA: b.CA}, wantErr: "no CA key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.bundle.IssueClientCert(dir, tt.file, tt.user, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("rejected calls wrote %d files", len(entries))
	}
}
