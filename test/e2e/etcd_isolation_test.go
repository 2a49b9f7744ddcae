package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/dnsplane/dnsplane/internal/portowner"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestEtcdIsolation: the embedded etcd of a running `up` answers only the
// API server's client certificate, on its client and its peer URL alike;
// a local process without it (an exec session is one, as uid 65534) reads
// nothing, whether it speaks plaintext, TLS without a certificate, or TLS
// with a certificate from another CA (issue 29, finding 1). The data dir,
// created beforehand world-listable, is 0700 and the keys 0600.
func TestEtcdIsolation(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	u := startUp(t, dataDir, nil)
	listeners := etcdListeners(t, filepath.Join(dataDir, "etcd"))
	if len(listeners) != 2 {
		t.Fatalf("etcd listens on %v; want its client and its peer URL", listeners)
	}

	if fi, err := os.Stat(dataDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir created 0755: %v after up (%v); want 0700", fi.Mode().Perm(), err)
	}
	pkiDir := filepath.Join(dataDir, "pki")
	for _, key := range []string{"apiserver-etcd-client.key", "etcd/ca.key", "etcd/server.key", "etcd/peer.key"} {
		if fi, err := os.Stat(filepath.Join(pkiDir, key)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("pki/%s: %v; want mode 0600", key, err)
		}
	}

	// The API server's identity, as only `up` holds it, reads the
	// registry on the client URL.
	apiserver := tlsFor(t, filepath.Join(pkiDir, "etcd", "ca.crt"),
		filepath.Join(pkiDir, "apiserver-etcd-client.crt"), filepath.Join(pkiDir, "apiserver-etcd-client.key"))
	served := 0
	for _, l := range listeners {
		if n, err := registryKeys(t, "https://"+l, apiserver); err == nil && n > 0 {
			served++
		}
	}
	if served != 1 {
		t.Fatalf("the API server's client read the registry on %d of etcd's listeners %v; want 1, the client URL", served, listeners)
	}

	// Another `up`'s etcd client certificate: same CN, another CA.
	otherDir := filepath.Join(t.TempDir(), "other")
	other := startUp(t, otherDir, nil)
	foreign := tlsFor(t, "", filepath.Join(otherDir, "pki", "apiserver-etcd-client.crt"), filepath.Join(otherDir, "pki", "apiserver-etcd-client.key"))
	if err := other.stop(); err != nil {
		t.Fatal(err)
	}
	for _, l := range listeners {
		for _, tt := range []struct {
			name, scheme string
			tls          *tls.Config
		}{
			{"plaintext", "http", nil},
			{"TLS without a client certificate", "https", tlsFor(t, "", "", "")},
			{"client certificate of another CA", "https", foreign},
		} {
			if n, err := registryKeys(t, tt.scheme+"://"+l, tt.tls); err == nil {
				t.Errorf("%s: read %d keys from %s; want refused", tt.name, n, l)
			}
			// The peer URL's HTTP API: /members lists the cluster.
			hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tt.tls}}
			if resp, err := hc.Get(tt.scheme + "://" + l + "/members"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Errorf("%s: GET %s/members: %s; want refused", tt.name, l, resp.Status)
				}
			}
		}
	}

	// What an exec session runs as by default cannot read the client key.
	if setpriv, err := exec.LookPath("setpriv"); err == nil && os.Getuid() == 0 {
		out, err := exec.CommandContext(ctxFor(t, 10*time.Second), setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups",
			"cat", filepath.Join(pkiDir, "apiserver-etcd-client.key")).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("uid 65534 reading the etcd client key: %v, %q; want permission denied", err, out)
		}
	}

	// With up.sock removed, `node` and `status` find the `up` by its lock.
	if err := os.Remove(filepath.Join(dataDir, "up.sock")); err != nil {
		t.Fatal(err)
	}
	missing := fmt.Sprintf("dnsplane up (pid %d) is running but its control socket %s is missing", u.cmd.Process.Pid, filepath.Join(dataDir, "up.sock"))
	if out, errOut, code := runDnsplane(t, "node", "list", "--data-dir", dataDir); code != 1 || out != "" || !strings.HasPrefix(errOut, "error: "+missing+";") {
		t.Errorf("node list without up.sock: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, missing)
	}
	if out, errOut, code := runDnsplane(t, "status", "--data-dir", dataDir); code != 1 || !strings.Contains(out, missing) {
		t.Errorf("status without up.sock: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, missing)
	}
	if err := u.stop(); err != nil {
		t.Error(err)
	}
}

// TestSecondUpSamePorts: a second `up` on the data dir of a running one
// names the first one's pid, whether it repeats its flags (what a user
// retypes) or moves --secure-port, and so does an `apiserver` on its port:
// never the --secure-port or DNS address they would share (issue 29).
func TestSecondUpSamePorts(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	securePort := fmt.Sprint(testkit.FreePort(t))
	dns := []string{"--dns-listen", fmt.Sprintf("127.0.54.1:%d", port), "--nodecache-listen", fmt.Sprintf("127.0.54.2:%d", port)}
	u := startUp(t, dataDir, nil, append([]string{"--secure-port", securePort}, dns...)...)
	want := fmt.Sprintf("error: data dir %s is in use by dnsplane up (pid %d); stop it or choose another --data-dir\n", dataDir, u.cmd.Process.Pid)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"up, same flags", append([]string{"up", "--data-dir", dataDir, "--upstream", "127.0.0.1:9", "--secure-port", securePort}, dns...)},
		{"up, another --secure-port", append([]string{"up", "--data-dir", dataDir, "--upstream", "127.0.0.1:9", "--secure-port", fmt.Sprint(testkit.FreePort(t))}, dns...)},
		{"apiserver, same --secure-port", []string{"apiserver", "--data-dir", dataDir, "--secure-port", securePort}},
	} {
		out, errOut, code := runDnsplane(t, tt.args...)
		if code != 2 || out != "" || errOut != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.name, code, out, errOut, want)
		}
	}
	if err := u.stop(); err != nil {
		t.Error(err)
	}
}

// etcdListeners are the TCP addresses the etcd member of etcdDir listens
// on, read from /proc as ss -ltp does: its process by its command line, its
// sockets' inodes by its descriptors, their addresses in its net/tcp tables.
// Without -v, `up` does not log where etcd listens.
func etcdListeners(t *testing.T, etcdDir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	pid := ""
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(cmdline), "etcd-member\x00--data-dir\x00"+etcdDir+"\x00") {
			pid = filepath.Base(filepath.Dir(p))
			break
		}
	}
	if pid == "" {
		t.Fatalf("no etcd-member process for %s", etcdDir)
	}
	inodes := map[uint64]bool{}
	fds, err := os.ReadDir(filepath.Join("/proc", pid, "fd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name()))
		var inode uint64
		if _, serr := fmt.Sscanf(target, "socket:[%d]", &inode); err == nil && serr == nil {
			inodes[inode] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(filepath.Join("/proc", pid, "net", table))
		if err != nil {
			t.Fatal(err)
		}
		socks, err := portowner.ParseTable(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range socks {
			if s.State == tcpListen && inodes[s.Inode] {
				out = append(out, s.Local.String())
			}
		}
	}
	return out
}

// tcpListen is TCP_LISTEN in include/net/tcp_states.h.
const tcpListen = 0x0A

// tlsFor is a client TLS config: verifying with caFile, or not at all
// (an attacker does not care whom it talks to) when it is "", and with the
// client certificate when given.
func tlsFor(t *testing.T, caFile, certFile, keyFile string) *tls.Config {
	t.Helper()
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		c.InsecureSkipVerify = true //nolint:gosec // see above
	} else {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			t.Fatal(err)
		}
		c.RootCAs = x509.NewCertPool()
		c.RootCAs.AppendCertsFromPEM(pem)
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c
}

// registryKeys counts the keys under /registry/ at endpoint.
func registryKeys(t *testing.T, endpoint string, tc *tls.Config) (int64, error) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tc, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	if resp.Count < 0 {
		return 0, errors.New("negative count")
	}
	return resp.Count, nil
}
