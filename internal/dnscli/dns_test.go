package dnscli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/cliexit"
)

const (
	exitInvalid = cliexit.Invalid
	exitUsage   = cliexit.Usage
)

// run executes args against a root with this package's commands, as both
// binaries wire them, and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{Use: "dnscli-test", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(NewDNSCommand(), NewNodeCacheCommand(), NewVersionCommand("dnscli-test"))
	root.SetArgs(args)
	return cliexit.Status(root.ExecuteContext(ctx), stderr)
}

// runCmd runs the command line in-process and returns stdout, stderr and
// the exit status.
func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestNodeCachePrintCorefile(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(rc, []byte("nameserver 192.0.2.53\nsearch foo.com bar.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	block := func(zones, bind, search, fwd string) string {
		return zones + " {\n    errors\n    bind " + bind + "\n    loopguard\n    warmstack\n    searchopt cluster.local {\n        code 65534\n        " + search +
			"\n    }\n    cache 30\n    forward . " + fwd + "\n}\n"
	}
	// Every name goes to --cluster-dns (issue 18): the resolv.conf gives
	// only the host search list, never the `.` block's resolvers.
	want := block("cluster.local:53 ap.k8s.io:53 in-addr.arpa:53 ip6.arpa:53", "127.0.0.1", "host_search foo.com bar.com", "10.96.0.10:53 {\n        force_tcp\n        max_concurrent 1000\n    }") + "\n" +
		block(".:53", "127.0.0.1", "host_search foo.com bar.com", "10.96.0.10:53 {\n        prefer_udp\n        max_concurrent 1000\n    }")
	out, errOut, code := runCmd(t, "nodecache", "--print-corefile", "--listen", "127.0.0.1:53", "--cluster-dns", "10.96.0.10:53", "--upstream-resolv-conf", rc)
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
}

func TestNodeCacheUsageErrors(t *testing.T) {
	base := []string{"nodecache", "--print-corefile", "--upstream-resolv-conf", "/dev/null"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no listen", []string{"nodecache", "--cluster-dns", "10.0.0.1:53"}, "--listen is required"},
		{"no cluster dns", []string{"nodecache", "--listen", "127.0.0.1:53"}, "--cluster-dns is required"},
		{"listen without port", append(base, "--listen", "127.0.0.1", "--cluster-dns", "10.0.0.1:53"), "want ADDR:PORT"},
		{"cluster dns hostname", append(base, "--listen", "127.0.0.1:53", "--cluster-dns", "kube-dns:53"), "cluster DNS address"},
		{"upstream is gone", append(base, "--listen", "127.0.0.1:53", "--cluster-dns", "10.0.0.1:53", "--upstream", "192.0.2.1"), "unknown flag: --upstream"},
		{"option code", append(base, "--listen", "127.0.0.1:53", "--cluster-dns", "10.0.0.1:53", "--option-code", "12"), "--option-code 12"},
		{"cache ttl", append(base, "--listen", "127.0.0.1:53", "--cluster-dns", "10.0.0.1:53", "--cache-ttl", "0"), "--cache-ttl"},
		{"missing resolv.conf", []string{"nodecache", "--print-corefile", "--listen", "127.0.0.1:53", "--cluster-dns", "10.0.0.1:53", "--upstream-resolv-conf", filepath.Join(t.TempDir(), "missing")}, "--upstream-resolv-conf"},
		{"log level", append(base, "--listen", "127.0.0.1:53", "--cluster-dns", "10.0.0.1:53", "--log-level", "loud"), "--log-level"},
		{"unknown flag", []string{"nodecache", "--bogus"}, "unknown flag"},
		{"args", []string{"nodecache", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.wantErr) || out != "" {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stderr containing %q", code, exitUsage, out, errOut, tt.wantErr)
			}
		})
	}
}

func TestDNSUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no conf", []string{"dns"}, exitUsage, "--conf or --configmap is required"},
		{"conf and configmap", []string{"dns", "--conf", "Corefile", "--configmap", "kube-system/coredns", "--kubeconfig", "kc"}, exitUsage, "mutually exclusive"},
		{"configmap without namespace", []string{"dns", "--configmap", "coredns", "--kubeconfig", "kc"}, exitUsage, "want NAMESPACE/NAME"},
		{"configmap with extra slash", []string{"dns", "--configmap", "a/b/c", "--kubeconfig", "kc"}, exitUsage, "want NAMESPACE/NAME"},
		{"configmap without kubeconfig", []string{"dns", "--configmap", "kube-system/coredns"}, exitUsage, "--kubeconfig is required"},
		{"kubeconfig without configmap", []string{"dns", "--conf", "Corefile", "--kubeconfig", "kc"}, exitUsage, "only used with --configmap"},
		{"missing kubeconfig file", []string{"dns", "--configmap", "kube-system/coredns", "--kubeconfig", filepath.Join(t.TempDir(), "nope")}, exitUsage, "--kubeconfig"},
		{"missing file", []string{"dns", "--conf", filepath.Join(t.TempDir(), "nope")}, exitUsage, "no such file"},
		{"log level", []string{"dns", "--conf", "x", "--log-level", "loud"}, exitUsage, "--log-level"},
		{"negative reload interval", []string{"dns", "--conf", "x", "--reload-interval", "-1s"}, exitUsage, "--reload-interval -1s"},
	}
	bad := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(bad, []byte(".:0 {\n    nosuchplugin\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{"corefile fails to load", []string{"dns", "--conf", bad}, exitInvalid, "nosuchplugin"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCmd(t, tt.args...)
			if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d (want %d)\nstderr: %s\nwant stderr containing %q", code, tt.wantCode, errOut, tt.wantErr)
			}
		})
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
		done <- run(ctx, []string{"dns", "--conf", conf, "--log-level", "warn"}, &out, &errOut)
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

// TestDNSRefusesServedAddress: a second `dnsplane dns` on the address a
// first one serves exits 1 naming the address and what moves it, instead
// of sharing it through SO_REUSEPORT (and splitting queries between the
// two); the first keeps running.
func TestDNSRefusesServedAddress(t *testing.T) {
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.LocalAddr().String()
	port := l.LocalAddr().(*net.UDPAddr).Port
	l.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    chaos first\n}\n", port)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"dns", "--conf", conf, "--log-level", "warn"}, io.Discard, &errOut)
	}()
	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	c := &dns.Client{Timeout: time.Second}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, _, err := c.Exchange(m, addr)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("first dnsplane dns does not answer: %v", err)
	}

	second := filepath.Join(dir, "Corefile.second")
	if err := os.WriteFile(second, []byte(fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    chaos second\n}\n", port)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCmd(t, "dns", "--conf", second, "--log-level", "warn")
	want := addr + " is already served by another process (a server block's port or the bind plugin in " + second + " picks another address)"
	if code != exitInvalid || !strings.Contains(stderr, want) {
		t.Fatalf("second dns: exit %d, stderr %q; want exit %d and %q", code, stderr, exitInvalid, want)
	}
	if resp, _, err := c.Exchange(m, addr); err != nil || len(resp.Answer) != 1 || !strings.Contains(resp.Answer[0].String(), "first") {
		t.Errorf("after the refused second server: %v %v", resp, err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("first dnsplane dns did not stop")
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCmd(t, "version")
	// The test binary links the module's CoreDNS, whose version go.mod
	// gives: v1.15.0 (docs/architecture.md).
	if code != 0 || !strings.HasPrefix(out, "dnscli-test v") || !strings.HasSuffix(out, "\nCoreDNS v1.15.0\n") || errOut != "" {
		t.Fatalf("version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
