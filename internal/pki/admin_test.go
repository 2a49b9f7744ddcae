package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/authn"
)

const unauthorizedBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"

// apiServer is a TLS server set up the way dnsplane's API server is: the
// bundle's TLS config, client certificates or tokens from the token file, and
// /version public. Its handler reports the authenticated user.
type apiServer struct {
	*httptest.Server
	bundle *Bundle
}

// newAPIServer binds a port first, because the kubeconfig written by
// EnsureAdmin needs the URL and the server needs the token file it creates.
func newAPIServer(t *testing.T, dataDir string) (srv *apiServer, kubeconfig, tokenFile string) {
	t.Helper()
	b, err := Ensure(dataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	kubeconfig, tokenFile, err = EnsureAdmin(dataDir, "https://"+hs.Listener.Addr().String(), b)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := authn.LoadTokenFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = authn.Middleware(authn.Union(authn.X509{Roots: caPool(b)}, tokens), []string{"/healthz", "/version"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, _ := authn.UserFrom(r.Context())
			if r.URL.Path == "/version" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"major":"1","minor":"37","gitVersion":"v1.37.2+dnsplane","platform":"linux/amd64"}`)
				return
			}
			_ = json.NewEncoder(w).Encode(u)
		}))
	cfg, err := b.ServerTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	hs.TLS = cfg
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(hs.Close)
	return &apiServer{Server: hs, bundle: b}, kubeconfig, tokenFile
}

// restConfigFrom turns a kubeconfig file into a rest.Config the way kubectl
// and client-go programs do.
func restConfigFrom(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func get(t *testing.T, rc *rest.Config, path string) (int, http.Header, string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(rc.Host + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

func TestEnsureAdminKubeconfigWorksWithClientGo(t *testing.T) {
	srv, kubeconfig, _ := newAPIServer(t, t.TempDir())
	admin := restConfigFrom(t, kubeconfig)
	if admin.Host != srv.URL || admin.BearerToken == "" || !bytes.Equal(admin.CAData, srv.bundle.CACertPEM) {
		t.Fatalf("rest.Config Host=%q token set=%v CA matches=%v", admin.Host, admin.BearerToken != "", bytes.Equal(admin.CAData, srv.bundle.CACertPEM))
	}
	certFile, keyFile, err := srv.bundle.IssueClientCert(t.TempDir(), "ops", "ops-user", []string{"ops"})
	if err != nil {
		t.Fatal(err)
	}
	withCert := rest.AnonymousClientConfig(admin)
	withCert.CertFile, withCert.KeyFile = certFile, keyFile
	wrongToken := rest.AnonymousClientConfig(admin)
	wrongToken.BearerToken = "not-the-token"

	tests := []struct {
		name     string
		rc       *rest.Config
		path     string
		wantCode int
		wantUser *authn.User
	}{
		{name: "admin token from the kubeconfig", rc: admin, path: "/api", wantCode: 200,
			wantUser: &authn.User{Name: "admin", UID: "admin-uid", Groups: []string{"system:masters", "system:authenticated"}}},
		{name: "client certificate from the CA", rc: withCert, path: "/api", wantCode: 200,
			wantUser: &authn.User{Name: "ops-user", Groups: []string{"ops", "system:authenticated"}}},
		{name: "anonymous", rc: rest.AnonymousClientConfig(admin), path: "/api", wantCode: 401},
		{name: "wrong token", rc: wrongToken, path: "/api/v1/namespaces", wantCode: 401},
		{name: "anonymous on a public path", rc: rest.AnonymousClientConfig(admin), path: "/version", wantCode: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, header, body := get(t, tt.rc, tt.path)
			if code != tt.wantCode {
				t.Fatalf("code = %d, want %d (body %q)", code, tt.wantCode, body)
			}
			if code == 401 {
				if body != unauthorizedBody || header.Get("Content-Type") != "application/json" {
					t.Errorf("401 response: Content-Type %q body %q", header.Get("Content-Type"), body)
				}
				return
			}
			if tt.wantUser == nil {
				return
			}
			var got authn.User
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("decode %q: %v", body, err)
			}
			if got.Name != tt.wantUser.Name || got.UID != tt.wantUser.UID || !slices.Equal(got.Groups, tt.wantUser.Groups) {
				t.Errorf("user = %+v, want %+v", got, *tt.wantUser)
			}
		})
	}
}

func TestEnsureAdminFiles(t *testing.T) {
	dir := t.TempDir()
	b, err := Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, tokenFile, err := EnsureAdmin(dir, "https://127.0.0.1:6443", b)
	if err != nil {
		t.Fatal(err)
	}
	if kubeconfig != filepath.Join(dir, "kubeconfig") || tokenFile != filepath.Join(dir, "tokens.csv") {
		t.Errorf("paths %s %s", kubeconfig, tokenFile)
	}
	tokens, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^([A-Za-z0-9_-]{43}),admin,admin-uid,"system:masters"\n$`).FindSubmatch(tokens)
	if line == nil {
		t.Fatalf("tokens.csv = %q", tokens)
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "dnsplane" || cfg.Contexts["dnsplane"].Cluster != "dnsplane" || cfg.Contexts["dnsplane"].AuthInfo != "dnsplane" ||
		cfg.Clusters["dnsplane"].Server != "https://127.0.0.1:6443" || cfg.AuthInfos["dnsplane"].Token != string(line[1]) {
		t.Errorf("kubeconfig = %+v", cfg)
	}
	before := snapshot(t, dir)
	for _, n := range []string{"kubeconfig", "tokens.csv"} {
		if before[n].mode != 0o600 {
			t.Errorf("%s mode %o, want 0600", n, before[n].mode)
		}
	}

	// A second start with the same URL changes nothing.
	if _, _, err := EnsureAdmin(dir, "https://127.0.0.1:6443", b); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	for n, s := range before {
		if a := after[n]; !bytes.Equal(a.data, s.data) || !a.modTime.Equal(s.modTime) {
			t.Errorf("%s changed on the second EnsureAdmin", n)
		}
	}

	// A new URL rewrites the kubeconfig and keeps the token.
	if _, _, err := EnsureAdmin(dir, "https://dnsplane.example:8443", b); err != nil {
		t.Fatal(err)
	}
	if cfg, err = clientcmd.LoadFromFile(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters["dnsplane"].Server; got != "https://dnsplane.example:8443" {
		t.Errorf("server after a URL change = %q", got)
	}
	if cfg.AuthInfos["dnsplane"].Token != string(line[1]) {
		t.Error("token changed with the URL")
	}
	if now, _ := os.ReadFile(tokenFile); !bytes.Equal(now, tokens) {
		t.Error("tokens.csv changed with the URL")
	}

	// A new CA is written into the kubeconfig too.
	other, err := Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := EnsureAdmin(dir, "https://dnsplane.example:8443", other); err != nil {
		t.Fatal(err)
	}
	if cfg, err = clientcmd.LoadFromFile(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cfg.Clusters["dnsplane"].CertificateAuthorityData, other.CACertPEM) {
		t.Error("kubeconfig kept the old CA")
	}
}

func TestEnsureAdminExistingTokenFile(t *testing.T) {
	const adminLine = `^(.*\n)?[A-Za-z0-9_-]{43},admin,admin-uid,"system:masters"\n$`
	tests := []struct {
		name      string
		existing  string
		mode      os.FileMode
		wantToken string // the admin token to be reused; "" means a new one
		wantFile  string // a regexp for the resulting file
		wantErr   string
	}{
		{name: "other users are kept", existing: "t1,alice,uid-a\nt2,bob,uid-b,dev", mode: 0o600,
			wantFile: `^t1,alice,uid-a\nt2,bob,uid-b,dev\n` + adminLine[1:]},
		{name: "an admin line is reused", existing: "t1,alice,uid-a\nsecret,admin,admin-uid,\"system:masters\"\n", mode: 0o600,
			wantToken: "secret", wantFile: `^t1,alice,uid-a\nsecret,admin,admin-uid,"system:masters"\n$`},
		{name: "the last admin line wins", existing: "old,admin,1\nnew,admin,2\n", mode: 0o600, wantToken: "new"},
		{name: "an admin token reassigned by a later line is not used", existing: "tok,admin,1\ntok,eve,2\n", mode: 0o600,
			wantFile: `^tok,admin,1\ntok,eve,2\n` + adminLine[1:]},
		{name: "a broad mode is restricted", existing: "secret,admin,1\n", mode: 0o644, wantToken: "secret"},
		{name: "an unparseable file is left alone", existing: "t\"1,alice,uid\n", mode: 0o600, wantErr: `bare " in non-quoted-field`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			b, err := Ensure(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			tokenPath := filepath.Join(dir, "tokens.csv")
			if err := os.WriteFile(tokenPath, []byte(tt.existing), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(tokenPath, tt.mode); err != nil {
				t.Fatal(err)
			}
			kubeconfig, _, err := EnsureAdmin(dir, "https://127.0.0.1:6443", b)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if data, _ := os.ReadFile(tokenPath); string(data) != tt.existing {
					t.Errorf("tokens.csv changed to %q", data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(tokenPath)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantFile != "" && !regexp.MustCompile(tt.wantFile).Match(data) {
				t.Errorf("tokens.csv = %q, want match for %q", data, tt.wantFile)
			}
			if info, _ := os.Stat(tokenPath); info.Mode().Perm() != 0o600 {
				t.Errorf("tokens.csv mode %o", info.Mode().Perm())
			}
			token := restConfigFrom(t, kubeconfig).BearerToken
			if tt.wantToken != "" && token != tt.wantToken {
				t.Errorf("kubeconfig token %q, want %q", token, tt.wantToken)
			}
			// Whatever happened, the kubeconfig's token is admin's for the API server.
			tf, err := authn.LoadTokenFile(tokenPath)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/api", nil)
			r.Header.Set("Authorization", "Bearer "+token)
			if u, ok, err := tf.Authenticate(r); !ok || err != nil || u.Name != "admin" {
				t.Errorf("kubeconfig token authenticates as (%+v, %v, %v)", u, ok, err)
			}
		})
	}
}

func TestEnsureAdminRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	b, err := Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, url string
		bundle    *Bundle
		wantErr   string
	}{
		{name: "plain http", url: "http://127.0.0.1:6443", bundle: b, wantErr: "must be https://host[:port]"},
		{name: "no host", url: "https://", bundle: b, wantErr: "must be https://host[:port]"},
		{name: "unparseable", url: "https://[::1", bundle: b, wantErr: "server URL"},
		{name: "no bundle", url: "https://127.0.0.1:6443", wantErr: "needs a bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := EnsureAdmin(dir, tt.url, tt.bundle); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	for _, n := range []string{"kubeconfig", "tokens.csv"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("rejected calls wrote %s", n)
		}
	}
}

func caPool(b *Bundle) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(b.CA)
	return pool
}

func TestCheckAdmin(t *testing.T) {
	tests := []struct {
		name    string
		content string // "-" = no file
		want    string // "" = ours (or absent)
	}{
		{"absent", "-", ""},
		{"empty", "", ""},
		{"ours", "apiVersion: v1\nkind: Config\ncurrent-context: dnsplane\nclusters:\n- name: dnsplane\n  cluster: {server: \"https://127.0.0.1:6443\"}\ncontexts:\n- name: dnsplane\n  context: {cluster: dnsplane, user: dnsplane}\nusers:\n- name: dnsplane\n  user: {token: t}\n", ""},
		{"other context", "apiVersion: v1\nkind: Config\ncurrent-context: prod\n", `its current context is "prod"`},
		{"extra cluster", "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: \"https://x\"}\n", `it has a cluster named "prod"`},
		{"not a kubeconfig", "{{{", "it is not a kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.content != "-" {
				if err := os.WriteFile(filepath.Join(dir, kubeconfigName), []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := CheckAdmin(dir)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckAdmin: %v", err)
				}
				return
			}
			var foreign *ForeignFileError
			if !errors.As(err, &foreign) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckAdmin: %v; want a ForeignFileError saying %q", err, tt.want)
			}
		})
	}
}

// TestEnsureAdminKeepsUserEdits: what a user changes in the admin
// kubeconfig (kubectl config set-context --current --namespace, a
// preference) survives a restart, which still updates the server's URL.
func TestEnsureAdminKeepsUserEdits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, _, err := EnsureAdmin(dir, "https://127.0.0.1:6443", b)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts["dnsplane"].Namespace = "ns1"
	cfg.Preferences.Colors = true
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	if err := CheckAdmin(dir); err != nil {
		t.Fatalf("an edited kubeconfig is refused: %v", err)
	}
	if _, _, err := EnsureAdmin(dir, "https://127.0.0.1:7443", b); err != nil {
		t.Fatal(err)
	}
	if cfg, err = clientcmd.LoadFromFile(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if ns := cfg.Contexts["dnsplane"].Namespace; ns != "ns1" || !cfg.Preferences.Colors {
		t.Errorf("after a restart: namespace %q, colors %v; want the user's ns1 and true", ns, cfg.Preferences.Colors)
	}
	if got := cfg.Clusters["dnsplane"].Server; got != "https://127.0.0.1:7443" {
		t.Errorf("server after a restart on a new port = %q", got)
	}
}
