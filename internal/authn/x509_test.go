package authn

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// x509Result is what the test server reports about each request.
type x509Result struct {
	User  User
	OK    bool
	Error string
}

// newX509Server serves X509.Authenticate's verdict over real TLS configured
// by pki, as the API server is; its error log goes to errLog.
func newX509Server(t *testing.T, b *pki.Bundle, errLog io.Writer) *httptest.Server {
	t.Helper()
	cfg, err := b.ServerTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		roots := x509.NewCertPool()
		roots.AddCert(b.CA)
		u, ok, err := X509{Roots: roots}.Authenticate(r)
		res := x509Result{User: u, OK: ok}
		if err != nil {
			res.Error = err.Error()
		}
		_ = json.NewEncoder(w).Encode(res)
	}))
	srv.TLS = cfg
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(errLog, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// tlsClient trusts b's CA and presents the given key pair, if any.
func tlsClient(t *testing.T, b *pki.Bundle, certFile, keyFile string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(b.CA)
	cfg := &tls.Config{RootCAs: pool}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func TestX509OverTLS(t *testing.T) {
	bundle, err := pki.Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	certDir := t.TempDir()
	aliceCrt, aliceKey, err := bundle.IssueClientCert(certDir, "alice", "alice", []string{"system:masters", "dev"})
	if err != nil {
		t.Fatal(err)
	}
	bobCrt, bobKey, err := bundle.IssueClientCert(certDir, "bob", "bob", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Same user name as alice, but from a CA the server does not trust.
	rogueCrt, rogueKey, err := other.IssueClientCert(certDir, "rogue", "alice", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	var errLog testkit.Buffer
	srv := newX509Server(t, bundle, &errLog)

	tests := []struct {
		name         string
		cert, key    string
		want         x509Result
		wantTLSError bool
	}{
		{name: "no client certificate", want: x509Result{}},
		{name: "certificate with groups", cert: aliceCrt, key: aliceKey,
			want: x509Result{User: User{Name: "alice", Groups: []string{"system:masters", "dev"}}, OK: true}},
		{name: "certificate without groups", cert: bobCrt, key: bobKey,
			want: x509Result{User: User{Name: "bob"}, OK: true}},
		{name: "certificate from another CA is refused", cert: rogueCrt, key: rogueKey,
			want: x509Result{Error: "x509: verifying client certificate \"alice\": x509: certificate signed by unknown authority"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tlsClient(t, bundle, tt.cert, tt.key).Get(srv.URL + "/api")
			if tt.wantTLSError {
				if err == nil {
					resp.Body.Close()
					t.Fatal("request with a certificate from another CA succeeded")
				}
				// The client sees an alert or a reset depending on timing; the
				// server's log says why the handshake failed.
				const why = "certificate signed by unknown authority"
				deadline := time.Now().Add(10 * time.Second)
				for !strings.Contains(errLog.String(), why) {
					if time.Now().After(deadline) {
						t.Fatalf("server log %q does not report %q (client error: %v)", errLog.String(), why, err)
					}
					time.Sleep(10 * time.Millisecond)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var got x509Result
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("decode %q: %v", body, err)
			}
			if tt.want.Error != "" && strings.HasPrefix(got.Error, tt.want.Error) {
				got.Error = tt.want.Error // the rest names the candidate CA
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestX509ConnectionState covers states a correctly configured server never
// produces, but which a misconfigured one could.
func TestX509ConnectionState(t *testing.T) {
	now := time.Now()
	cert := func(cn string, notBefore, notAfter time.Time, orgs ...string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn, Organization: orgs}, NotBefore: notBefore, NotAfter: notAfter}
	}
	valid := cert("carol", now.Add(-time.Hour), now.Add(time.Hour), "ops")
	ca := cert("ca", now.Add(-time.Hour), now.Add(time.Hour))
	tests := []struct {
		name    string
		state   *tls.ConnectionState
		want    User
		wantOK  bool
		wantErr string
	}{
		{name: "plain HTTP"},
		{name: "TLS without client certificate", state: &tls.ConnectionState{}},
		{name: "verified certificate", state: &tls.ConnectionState{
			PeerCertificates: []*x509.Certificate{valid}, VerifiedChains: [][]*x509.Certificate{{valid, ca}}},
			want: User{Name: "carol", Groups: []string{"ops"}}, wantOK: true},
		{name: "presented but not verified", state: &tls.ConnectionState{PeerCertificates: []*x509.Certificate{valid}},
			wantErr: "not verified"},
		{name: "empty common name carries no user, as in kube", state: func() *tls.ConnectionState {
			c := cert("", now.Add(-time.Hour), now.Add(time.Hour), "ops")
			return &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}, VerifiedChains: [][]*x509.Certificate{{c, ca}}}
		}()},
		{name: "leaf expired since the handshake", state: func() *tls.ConnectionState {
			c := cert("dave", now.Add(-2*time.Hour), now.Add(-time.Minute))
			return &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}, VerifiedChains: [][]*x509.Certificate{{c, ca}}}
		}(), wantErr: "outside its validity period"},
		{name: "CA expired since the handshake", state: func() *tls.ConnectionState {
			old := cert("ca", now.Add(-2*time.Hour), now.Add(-time.Minute))
			return &tls.ConnectionState{PeerCertificates: []*x509.Certificate{valid}, VerifiedChains: [][]*x509.Certificate{{valid, old}}}
		}(), wantErr: "outside its validity period"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api", nil)
			r.TLS = tt.state
			got, ok, err := X509{}.Authenticate(r)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got (%#v, %v), want (%#v, %v)", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
