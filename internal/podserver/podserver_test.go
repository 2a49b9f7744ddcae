package podserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestMain lets the test binary stand in for dnsplane's __podexec and
// __podsandbox.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == podexec.Subcommand {
		code, err := podexec.Main(os.Args[2:])
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == podsandbox.Subcommand {
		code, err := podsandbox.Main(os.Args[2:])
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

type pods map[string]types.UID

func (p pods) Pod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if uid, ok := p[ns+"/"+name]; ok {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}, nil
	}
	return nil, ErrPodNotFound
}

const (
	podResolv = "search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
	podHosts  = "127.0.0.1\tlocalhost\n10.244.0.7\tweb\n"
)

type fixture struct {
	url    string
	client *rest.Config // with the CA-signed client certificate
	pkiDir string
	bundle *pki.Bundle
	stop   context.CancelFunc // shuts the server down
}

func start(t *testing.T) *fixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (mount namespaces)")
	}
	pkiDir := t.TempDir()
	b, err := pki.Ensure(pkiDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := pki.EnsureAgentServing(pkiDir, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	dir := podfiles.Dir(state, "ns1", "web", "uid-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{podfiles.ResolvConf: podResolv, podfiles.Hosts: podHosts} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startSandbox(t, state, podsandbox.Pod{Namespace: "ns1", Name: "web", UID: "uid-1", Hostname: "web", Dir: dir})
	roots := x509.NewCertPool()
	roots.AddCert(b.CA)
	s, err := New(Config{StateDir: state, Pods: pods{"ns1/web": "uid-1", "ns1/nofiles": "uid-2"}, ClientCA: roots, Cert: cert,
		PodexecCommand: []string{os.Args[0]}, AllowedClients: []string{pki.KubeletClientUser}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	ccert, ckey, err := pki.EnsureKubeletClient(pkiDir, b)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{
		url:    "https://" + l.Addr().String(),
		client: &rest.Config{Host: "https://" + l.Addr().String(), TLSClientConfig: rest.TLSClientConfig{CAData: b.CACertPEM, CertFile: ccert, KeyFile: ckey}},
		pkiDir: pkiDir, bundle: b, stop: cancel,
	}
}

// startSandbox starts the pod's sandbox as the agent does, with the test
// binary as dnsplane and ID ranges of its own.
func startSandbox(t *testing.T, state string, p podsandbox.Pod) *podsandbox.Manager {
	t.Helper()
	alloc, err := podsandbox.NewAllocator(t.TempDir(), podsandbox.DefaultFirstBase, podsandbox.DefaultRanges)
	if err != nil {
		t.Fatal(err)
	}
	m, err := podsandbox.NewManager(podsandbox.Config{StateDir: state, Allocator: alloc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if err := m.Ensure(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *fixture) exec(t *testing.T, pod string, tty bool, stdin io.Reader, cmd ...string) (string, string, error) {
	t.Helper()
	q := url.Values{"command": cmd, "output": {"1"}}
	if !tty {
		q.Set("error", "1")
	} else {
		q.Set("tty", "1")
	}
	if stdin != nil {
		q.Set("input", "1")
	}
	u, _ := url.Parse(f.url + "/exec/ns1/" + pod + "/c?" + q.Encode())
	ex, err := remotecommand.NewSPDYExecutor(f.client, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: &out, Tty: tty}
	if !tty {
		opts.Stderr = &errOut
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = ex.StreamWithContext(ctx, opts)
	return out.String(), errOut.String(), err
}

func TestExec(t *testing.T) {
	f := start(t)
	out, errOut, err := f.exec(t, "web", false, nil, "cat", "/etc/resolv.conf", "/etc/hosts")
	if err != nil || out != podResolv+podHosts {
		t.Fatalf("out %q, stderr %q, err %v", out, errOut, err)
	}

	// stdin reaches the command; stderr comes back apart.
	out, errOut, err = f.exec(t, "web", false, strings.NewReader("hello\n"), "sh", "-c", "cat; echo oops >&2")
	if err != nil || out != "hello\n" || errOut != "oops\n" {
		t.Errorf("stdin: out %q, stderr %q, err %v", out, errOut, err)
	}

	// The command's exit status comes back as kubelet reports it.
	_, _, err = f.exec(t, "web", false, nil, "sh", "-c", "exit 3")
	var exit interface{ ExitStatus() int }
	if !errors.As(err, &exit) || exit.ExitStatus() != 3 {
		t.Errorf("exit 3: err %v", err)
	}

	// A terminal: the command sees one.
	out, _, err = f.exec(t, "web", true, nil, "sh", "-c", "test -t 0 && test -t 1 && echo tty $TERM")
	if err != nil || strings.TrimSpace(out) != "tty xterm" {
		t.Errorf("tty: out %q, err %v", out, err)
	}
}

func TestExecErrors(t *testing.T) {
	f := start(t)
	for _, tc := range []struct{ pod, want string }{
		{"nosuch", "pod ns1/nosuch is not on this node"},
		{"nofiles", "pod ns1/nofiles has no DNS files yet (resolv.conf missing)"},
	} {
		_, _, err := f.exec(t, tc.pod, false, nil, "true")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.pod, err, tc.want)
		}
	}
	_, _, err := f.exec(t, "web", false, nil, "no-such-command-dnsplane")
	var exit interface{ ExitStatus() int }
	if !errors.As(err, &exit) || exit.ExitStatus() != podexec.ExitNotFound {
		t.Errorf("missing command: err %v", err)
	}
}

func TestRefusesClientsWithoutCACert(t *testing.T) {
	f := start(t)
	get := func(cfg *tls.Config) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
		resp, err := c.Get(f.url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	roots := x509.NewCertPool()
	roots.AddCert(f.bundle.CA)
	if err := get(&tls.Config{RootCAs: roots}); err == nil {
		t.Error("a client without a certificate was served")
	}
	// A certificate from another CA.
	other, err := pki.Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := other.IssueClientCert(t.TempDir(), "admin", "admin", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := get(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{foreign}}); err == nil {
		t.Error("a client with another CA's certificate was served")
	}
	// The cluster CA's admin certificate: the right CA, not the API server.
	adminCert, adminKey, err := f.bundle.IssueClientCert(t.TempDir(), "admin", "admin", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tls.LoadX509KeyPair(adminCert, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := get(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{admin}}); err == nil {
		t.Error("the cluster CA's admin certificate was served: only the API server's kubelet client may connect")
	}
	// TLS 1.1 is refused.
	ours, _ := tls.LoadX509KeyPair(filepath.Join(f.pkiDir, "apiserver-kubelet-client.crt"), filepath.Join(f.pkiDir, "apiserver-kubelet-client.key"))
	if err := get(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{ours}, MaxVersion: tls.VersionTLS11}); err == nil {
		t.Error("TLS 1.1 was served")
	}
	if err := get(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{ours}}); err != nil {
		t.Errorf("the CA's client certificate: %v", err)
	}
}

func TestAttachAndLogsRefused(t *testing.T) {
	f := start(t)
	ours, err := tls.LoadX509KeyPair(filepath.Join(f.pkiDir, "apiserver-kubelet-client.crt"), filepath.Join(f.pkiDir, "apiserver-kubelet-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(f.bundle.CA)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{ours}}}}
	for path, want := range map[string]string{
		"/attach/ns1/web/c":        "no process to attach to",
		"/containerLogs/ns1/web/c": "pods have no logs",
	} {
		resp, err := c.Get(f.url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
}

// sleepers are the pids of processes whose command line has arg, unique
// to a test (other tests on the machine may run their own sleep 600).
func sleepers(arg string) ([]string, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []string
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // not a process, or gone
		}
		if slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			pids = append(pids, e.Name())
		}
	}
	return pids, nil
}

// waitSleepers polls until there are want processes with arg.
func waitSleepers(t *testing.T, arg string, want int) {
	t.Helper()
	testkit.PollEvery(t, fmt.Sprintf("%d processes with %q", want, arg), 20*time.Millisecond, 15*time.Second, func(context.Context) (bool, error) {
		got, err := sleepers(arg)
		if err != nil {
			return false, err
		}
		return len(got) == want, fmt.Errorf("pids %v", got)
	})
}

// TestClientGoneEndsCommand: when the client goes away the command ends,
// and so does what it started in the background (issue 22 item 3): a
// session must not outlive its client holding descriptors. Also when the
// exec server shuts down.
func TestClientGoneEndsCommand(t *testing.T) {
	f := start(t)
	for _, tty := range []bool{false, true} {
		t.Run(fmt.Sprintf("tty=%v", tty), func(t *testing.T) {
			arg := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e6)
			ctx, hangUp := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				q := url.Values{"command": {"sh", "-c", "sleep " + arg + " & sleep " + arg}, "output": {"1"}}
				if tty {
					q.Set("tty", "1")
				}
				u, _ := url.Parse(f.url + "/exec/ns1/web/c?" + q.Encode())
				ex, err := remotecommand.NewSPDYExecutor(f.client, "POST", u)
				if err != nil {
					done <- err
					return
				}
				done <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard, Tty: tty})
			}()
			waitSleepers(t, arg, 2)
			hangUp()
			if err := <-done; err == nil {
				t.Error("the session ended without an error")
			}
			waitSleepers(t, arg, 0)
		})
	}
}

// TestShutdownEndsCommand: the exec server's shutdown ends its sessions'
// commands and their process groups.
func TestShutdownEndsCommand(t *testing.T) {
	f := start(t)
	arg := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e6)
	done := make(chan error, 1)
	go func() {
		_, _, err := f.exec(t, "web", false, nil, "sh", "-c", "sleep "+arg+" & sleep "+arg)
		done <- err
	}()
	waitSleepers(t, arg, 2)
	f.stop()
	if err := <-done; err == nil {
		t.Error("the session ended without an error")
	}
	waitSleepers(t, arg, 0)
}
