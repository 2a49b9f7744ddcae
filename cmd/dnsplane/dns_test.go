package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestNodeCacheWired: `dnsplane nodecache` is internal/dnscli's command
// (whose tests cover its flags and Corefile), here as before the data-plane
// binary split it out.
func TestNodeCacheWired(t *testing.T) {
	rc := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(rc, []byte("nameserver 192.0.2.53\nsearch foo.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "", "nodecache", "--print-corefile", "--listen", "127.0.0.1:53", "--cluster-dns", "10.96.0.10:53", "--upstream-resolv-conf", rc)
	if code != 0 || !strings.Contains(out, "host_search foo.com") || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, errOut, code := runCmd(t, "", "nodecache", "--listen", "127.0.0.1:53"); code != exitUsage || !strings.Contains(errOut, "--cluster-dns is required") {
		t.Fatalf("without --cluster-dns: exit %d, stderr %q", code, errOut)
	}
}

// chaosCorefile writes a Corefile that answers CH TXT version.bind with
// "dnsplane-test" on a free 127.0.0.1 port, and returns its path and port.
func chaosCorefile(t *testing.T) (string, int) {
	t.Helper()
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.LocalAddr().(*net.UDPAddr).Port
	l.Close()
	conf := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    chaos dnsplane-test\n}\n", port)), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf, port
}

// TestDNSServesUntilCancelled runs `dnsplane dns` with a chaos Corefile,
// queries it, and stops it through the context as SIGINT would.
func TestDNSServesUntilCancelled(t *testing.T) {
	conf, port := chaosCorefile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"dns", "--conf", conf, "--log-level", "warn"}, strings.NewReader(""), &out, &errOut)
	}()

	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	c := &dns.Client{Timeout: time.Second}
	var resp *dns.Msg
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		var err error
		resp, _, err = c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", port))
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("querying dnsplane dns: %v (stderr: %s)", err, errOut.String())
	}
	if len(resp.Answer) != 1 || !strings.Contains(resp.Answer[0].String(), "dnsplane-test") {
		t.Errorf("answer %v", resp.Answer)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d, stderr: %s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dnsplane dns did not stop on cancel")
	}
}
