package storage

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/dnsplane/dnsplane/internal/pki"
)

// TestEmbeddedRefusesOtherClients: a local process that can reach the
// embedded etcd's loopback ports, but cannot read the client certificate in
// the data dir, reads nothing, neither on the client URL nor on the peer URL
// (issue 29, finding 1: an exec session read every Secret and wrote a
// ClusterRoleBinding straight into etcd). The API server's client can.
func TestEmbeddedRefusesOtherClients(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir := t.TempDir()
	emb, err := StartEmbedded(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emb.Close() })

	apiserver, err := Connect(ctx, emb.ClientConfig())
	if err != nil {
		t.Fatalf("the API server's client: %v", err)
	}
	t.Cleanup(func() { apiserver.Close() })
	if _, err := apiserver.Put(ctx, "/registry/secrets/kube-system/token", "secret"); err != nil {
		t.Fatalf("the API server's client: %v", err)
	}

	// A client certificate from another etcd CA, as valid as ours.
	other, err := pki.EnsureEtcd(filepath.Join(t.TempDir(), "pki"))
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := tls.LoadX509KeyPair(other.ClientCertFile, other.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	// An attacker does not verify etcd's certificate: only etcd's check
	// of the client may stop it.
	//nolint:gosec // see above
	noVerify := func(certs ...tls.Certificate) *tls.Config {
		return &tls.Config{InsecureSkipVerify: true, Certificates: certs}
	}

	hostPort := func(u string) string {
		t.Helper()
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		return p.Host
	}
	client := hostPort(emb.Endpoints()[0])
	peer := hostPort(emb.PeerURLs()[0])

	for _, tt := range []struct {
		name     string
		endpoint string
		tls      *tls.Config
	}{
		{"plaintext", "http://" + client, nil},
		{"TLS without a client certificate", "https://" + client, noVerify()},
		{"client certificate of another CA", "https://" + client, noVerify(foreign)},
		{"peer URL, plaintext", "http://" + peer, nil},
		{"peer URL, client certificate of another CA", "https://" + peer, noVerify(foreign)},
	} {
		t.Run("etcd client/"+tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := clientv3.New(clientv3.Config{Endpoints: []string{tt.endpoint}, TLS: tt.tls,
				DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
			if err != nil {
				return // refused at once
			}
			defer c.Close()
			gctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			if resp, err := c.Get(gctx, "/registry/", clientv3.WithPrefix()); err == nil {
				t.Fatalf("Get from %s succeeded (%d keys); want it refused", tt.endpoint, resp.Count)
			}
		})
	}

	// etcd's HTTP side (/health, /metrics) is on a unix socket in its data
	// dir, behind the same check.
	sock := filepath.Join(dir, httpSocketName)
	for _, tt := range []struct {
		name string
		tls  *tls.Config
		ok   bool
	}{
		{"TLS without a client certificate", noVerify(), false},
		{"client certificate of another CA", noVerify(foreign), false},
		{"the API server's client certificate", noVerify(apiserverCert(t, emb)), true},
	} {
		t.Run("HTTP socket/"+tt.name, func(t *testing.T) {
			t.Parallel()
			tr := &http.Transport{TLSClientConfig: tt.tls, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			}}
			resp, err := (&http.Client{Timeout: 3 * time.Second, Transport: tr}).Get("https://etcd/health")
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				resp.Body.Close()
			}
			if ok != tt.ok {
				t.Fatalf("GET /health on %s: %v, %v; want answered %v", sock, resp, err, tt.ok)
			}
		})
	}

	// The peer URL serves raft and membership over HTTP: /members lists the
	// cluster and /raft accepts messages that rewrite it.
	for _, tt := range []struct {
		name string
		url  string
		tls  *tls.Config
	}{
		{"plaintext", "http://" + peer + "/members", nil},
		{"TLS without a client certificate", "https://" + peer + "/members", noVerify()},
		{"client certificate of another CA", "https://" + peer + "/members", noVerify(foreign)},
	} {
		t.Run("peer HTTP/"+tt.name, func(t *testing.T) {
			t.Parallel()
			hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: tt.tls}}
			resp, err := hc.Get(tt.url)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatalf("GET %s: %s; want it refused", tt.url, resp.Status)
			}
		})
	}
}

func apiserverCert(t *testing.T, emb *Embedded) tls.Certificate {
	t.Helper()
	cc := emb.ClientConfig()
	c, err := tls.LoadX509KeyPair(cc.CertFile, cc.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
