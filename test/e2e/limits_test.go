package e2e

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

const (
	// floodNofile is the descriptor limit `up` runs under, as in the issue.
	floodNofile = 200
	// floodConnections is how many TLS connections the flood holds: more
	// than the process has descriptors.
	floodConnections = 300
	// floodHold is how long the flood is held. In-process etcd purged old
	// snapshot and WAL files every 30s, and failing to open the snapshot
	// directory then is what killed the process. etcd now runs in a child
	// process with descriptors of its own; holding past one purge (and
	// past the DNS servers' TCP idle timeout) shows that nothing else in
	// the process runs out either.
	floodHold = 35 * time.Second
)

// TestConnectionFloodKeepsUpAlive is the reproduction: `dnsplane up`
// (API server, cluster DNS and node cache in one process)
// with the descriptor limit at 200, flooded without credentials by TLS
// connections that each send one GET /healthz and stay open. Before the
// connection limit the process ran out of descriptors and embedded etcd
// exited it; now the API refuses connections over its limit, DNS keeps
// answering throughout, and the API serves again once the flood ends.
func TestConnectionFloodKeepsUpAlive(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skipf("prlimit (util-linux) is not on PATH: %v", err)
	}
	u := startUp(t, t.TempDir(), []string{prlimit, fmt.Sprintf("--nofile=%d:%d", floodNofile, floodNofile)})
	p, apiURL, kubeconfig, dnsAddr, nodeAddr := u.process, u.URL, u.Kubeconfig, u.ClusterDNS, u.NodeCache
	// The chosen limit is logged; 200 - max(128, 200/4) = 72.
	if log := p.stderr.String(); !strings.Contains(log, "API server connection limit") || !strings.Contains(log, "max_connections=72") {
		t.Errorf("the log does not report the connection limit of 72:\n%s", log)
	}

	// The cluster DNS answers from the API (through the node cache) before
	// the flood.
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		got, err := lookupA(nodeAddr, "kubernetes.default.svc.cluster.local.")
		return err == nil && got == "10.96.0.1", fmt.Sprintf("kubernetes.default via the node cache: %q, %v", got, err)
	})

	tlsConfig, err := rest.TLSConfigFor(rest.AnonymousClientConfig(restConfig(t, kubeconfig)))
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	addr := strings.TrimPrefix(apiURL, "https://")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	refused := 0
	for range floodConnections {
		c, err := holdHealthz(addr, tlsConfig)
		if err != nil {
			refused++
			continue
		}
		held = append(held, c)
	}
	t.Logf("flood: %d connections served and held, %d refused", len(held), refused)
	if len(held) == 0 || len(held) > 72 || refused < floodConnections-72 {
		t.Errorf("%d connections served and %d refused; want at most the limit (72) served", len(held), refused)
	}

	// Hold the flood past an etcd purge, checking that the process lives,
	// keeps descriptors free and that DNS answers all along.
	for start := time.Now(); time.Since(start) < floodHold; time.Sleep(time.Second) {
		if !p.running() {
			t.Fatalf("the process died during the flood: %v", p.err)
		}
		if open, err := openDescriptors(p.cmd.Process.Pid); err == nil && open > floodNofile-64 {
			t.Errorf("%d descriptors open during the flood, want at least 64 of %d free", open, floodNofile)
		}
		if got, err := lookupA(nodeAddr, "kubernetes.default.svc.cluster.local."); err != nil || got != "10.96.0.1" {
			t.Errorf("during the flood, kubernetes.default via the node cache: %q, %v", got, err)
		}
		if got, err := lookupA(dnsAddr, "kubernetes.default.svc.cluster.local."); err != nil || got != "10.96.0.1" {
			t.Errorf("during the flood, kubernetes.default via the cluster DNS: %q, %v", got, err)
		}
	}

	for _, c := range held {
		c.Close()
	}
	held = nil
	// Once the flood ends, real clients are served again.
	cs := clientFor(t, kubeconfig)
	eventually(t, 20*time.Second, 200*time.Millisecond, func() (bool, string) {
		_, err := cs.CoreV1().Namespaces().Get(ctxFor(t, 10*time.Second), "default", metav1.GetOptions{})
		return err == nil, fmt.Sprintf("client-go after the flood: %v", err)
	})
	if _, err := exec.LookPath("kubectl"); err == nil {
		mustKubectl(t, kubeconfig, "", "get", "namespace", "default")
	}
	if err := p.stop(); err != nil {
		t.Errorf("stopping: %v", err)
	}
}

// holdHealthz opens a TLS connection, sends GET /healthz without
// credentials and returns the connection, open, once the answer is "ok".
func holdHealthz(addr string, tlsConfig *tls.Config) (net.Conn, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, tlsConfig)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "ok" {
		c.Close()
		return nil, fmt.Errorf("GET /healthz: %d %q %w", resp.StatusCode, body, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// lookupA asks addr over UDP for name's A record and returns the last one.
func lookupA(addr, name string) (string, error) {
	c := &dns.Client{Timeout: 2 * time.Second}
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	r, _, err := c.Exchange(q, addr)
	if err != nil {
		return "", err
	}
	for i := len(r.Answer) - 1; i >= 0; i-- {
		if a, ok := r.Answer[i].(*dns.A); ok {
			return a.A.String(), nil
		}
	}
	return "", fmt.Errorf("no A record: %s", dns.RcodeToString[r.Rcode])
}

// openDescriptors counts the descriptors pid has open (Linux /proc).
func openDescriptors(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(entries), err
}
