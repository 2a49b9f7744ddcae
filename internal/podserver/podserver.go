// Package podserver is the node agent's exec server: the part of kubelet's
// HTTPS API that kube-apiserver proxies `kubectl exec` to. It serves
// /exec/{namespace}/{pod}/{container} with kubelet's own streaming library
// (k8s.io/cri-streaming's remotecommand: SPDY v1-v4 and WebSocket up to
// v4.channel.k8s.io; the API server translates kubectl's WebSocket v5 to
// SPDY, as kube-apiserver does for kubelets) and runs the command as
// `dnsplane exec` does: in the pod's sandbox (internal/podsandbox,
// docs/exec.md), or, for a privileged container, on the host with the pod's
// resolv.conf and hosts bind-mounted on /etc (internal/podexec). dnsplane
// runs no containers, so /attach and /containerLogs answer with a clear
// refusal.
//
// Only clients with a certificate from the configured CA get past the TLS
// handshake: the API server's kubelet-client certificate, or an admin's.
package podserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// ErrPodNotFound is what a PodLookup returns (wrapped or not) for a pod it
// does not know.
var ErrPodNotFound = errors.New("pod not found")

// PodLookup finds a pod: its UID names its directory under the state dir,
// its securityContext says who the command runs as (podexec.IdentityOf). It
// returns an error wrapping ErrPodNotFound for an unknown pod.
type PodLookup interface {
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// APIServerClient is the client certificate common name the API server
// dials node agents with (its kubelet client, pki.EnsureKubeletClient): the
// one client an agent's exec server accepts unless told otherwise.
const APIServerClient = pki.KubeletClientUser

// Config configures a Server.
type Config struct {
	// StateDir is the agent's --state-dir, holding podfiles.PodsDir.
	StateDir string
	// Pods maps a namespace and name to the pod's UID.
	Pods PodLookup
	// ClientCA verifies client certificates; every client must present one.
	ClientCA *x509.CertPool
	// Cert is the server's certificate.
	Cert tls.Certificate
	// Logger; nil = slog.Default().
	Logger *slog.Logger
	// PodexecCommand is the argv prefix that starts dnsplane, to which
	// `__podexec DIR -- CMD...` is appended; nil = /proc/self/exe.
	PodexecCommand []string
	// AllowedClients, when not empty, are the only client certificate
	// common names accepted (the API server's kubelet client, in `up`):
	// the cluster CA also signs the admin's certificate, and the agent's
	// port is for the API server alone, as kubelet's is with authorization
	// on. Others fail the TLS handshake.
	AllowedClients []string
	// StreamIdleTimeout ends a session idle this long; 0 = 4h, kubelet's.
	StreamIdleTimeout time.Duration
}

// Server is the exec server. Create it with New.
type Server struct {
	c      Config
	log    *slog.Logger
	tls    *tls.Config
	prefix []string
}

// New checks c and returns a Server.
func New(c Config) (*Server, error) {
	if c.StateDir == "" {
		return nil, errors.New("podserver: no state dir")
	}
	if c.Pods == nil {
		return nil, errors.New("podserver: no pod lookup")
	}
	if c.ClientCA == nil {
		return nil, errors.New("podserver: no client CA: every client must present a certificate")
	}
	if len(c.Cert.Certificate) == 0 {
		return nil, errors.New("podserver: no serving certificate")
	}
	s := &Server{c: c, log: c.Logger, prefix: c.PodexecCommand}
	if s.log == nil {
		s.log = slog.Default()
	}
	if len(s.prefix) == 0 {
		s.prefix = podexec.DefaultPrefix()
	}
	if s.c.StreamIdleTimeout == 0 {
		s.c.StreamIdleTimeout = 4 * time.Hour
	}
	s.tls = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{c.Cert},
		ClientCAs:    c.ClientCA,
		// Anything without a certificate from the CA fails the handshake.
		ClientAuth: tls.RequireAndVerifyClientCert,
		// SPDY and WebSocket upgrades are HTTP/1.1.
		NextProtos: []string{"http/1.1"},
	}
	if allowed := c.AllowedClients; len(allowed) > 0 {
		s.tls.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !slices.Contains(allowed, cs.PeerCertificates[0].Subject.CommonName) {
				return fmt.Errorf("podserver: client certificate is not one of %v", allowed)
			}
			return nil
		}
	}
	return s, nil
}

// Handler is the server's HTTP handler, without TLS (Serve adds it).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/exec/", s.serveExec)
	mux.HandleFunc("/attach/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "dnsplane runs no containers, so there is no process to attach to: use `kubectl exec` or `dnsplane exec` to run a command with the pod's DNS files", http.StatusBadRequest)
	})
	mux.HandleFunc("/containerLogs/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "dnsplane runs no containers, so pods have no logs: use `kubectl exec` or `dnsplane exec` to run a command with the pod's DNS files", http.StatusBadRequest)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	return mux
}

// Serve serves HTTPS on l until ctx ends, then closes open connections.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		TLSConfig:         s.tls,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(tls.NewListener(l, s.tls)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		// Exec sessions are hijacked connections Shutdown does not wait
		// for; their contexts (BaseContext) end with ctx.
		_ = hs.Close()
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// serveExec answers /exec/{namespace}/{pod}/{container}, as kubelet's
// getExec: the options from the query, then the streams.
func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/exec/"), "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		http.Error(w, "want /exec/{namespace}/{pod}/{container}", http.StatusNotFound)
		return
	}
	ns, name, container := parts[0], parts[1], parts[2]
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()["command"]
	if len(cmd) == 0 {
		http.Error(w, "no command: give one or more command= parameters", http.StatusBadRequest)
		return
	}
	dir, pod, code, err := s.podDir(r.Context(), ns, name)
	if err != nil {
		http.Error(w, err.Error(), code)
		return
	}
	id, err := podexec.IdentityOf(pod, container)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.log.Info("exec", "namespace", ns, "pod", name, "container", container, "command", cmd, "tty", opts.TTY,
		"user", clientName(r), "uid", id.UID, "gid", id.GID, "privileged", id.Privileged)
	// The request's context does not end when a hijacked connection
	// closes, so the session's does: a client that went away (a killed
	// kubectl, whose API server closes our end) ends the command rather
	// than leaving `sleep 600` behind holding its descriptors.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	remotecommand.ServeExec(&hijackWatcher{ResponseWriter: w, gone: cancel}, r.WithContext(ctx), &executor{s: s, dir: dir, uid: pod.UID, id: id}, name, "", container, cmd, opts,
		s.c.StreamIdleTimeout, remotecommand.DefaultStreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func clientName(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return ""
	}
	return r.TLS.PeerCertificates[0].Subject.CommonName
}

// podDir finds the pod and its directory and checks its files are there.
func (s *Server) podDir(ctx context.Context, ns, name string) (string, *corev1.Pod, int, error) {
	pod, err := s.c.Pods.Pod(ctx, ns, name)
	if errors.Is(err, ErrPodNotFound) {
		return "", nil, http.StatusNotFound, fmt.Errorf("pod %s/%s is not on this node", ns, name)
	}
	if err != nil {
		return "", nil, http.StatusInternalServerError, fmt.Errorf("looking up pod %s/%s: %w", ns, name, err)
	}
	dir := podfiles.Dir(s.c.StateDir, ns, name, pod.UID)
	if err := podexec.CheckFiles(dir); err != nil {
		return "", nil, http.StatusServiceUnavailable, fmt.Errorf("pod %s/%s has no DNS files yet (%s): the agent has not written them", ns, name, missing(err))
	}
	return dir, pod, 0, nil
}

func missing(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return filepath.Base(pe.Path) + " missing"
	}
	return err.Error()
}

// executor runs the command for remotecommand.ServeExec.
type executor struct {
	s   *Server
	dir string
	uid types.UID
	id  podexec.Identity
}

// ExecInContainer runs the command in the pod's sandbox; a privileged
// container's (admitted only under --allow-privileged) runs on the host as
// root, in a mount namespace of its own with the pod's files on /etc
// (docs/exec.md).
func (e *executor) ExecInContainer(ctx context.Context, _, _, _ string, argv []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	if !e.id.Privileged {
		var o, eo io.Writer
		if out != nil {
			o = out
		}
		if errOut != nil {
			eo = errOut
		}
		return runInSandbox(ctx, e.s.c.StateDir, e.uid, e.id, argv, in, o, eo, tty, resize)
	}
	cmd := podexec.Command(ctx, e.s.prefix, e.dir, e.id, argv)
	cmd.Env = commandEnv(tty, e.id.UID)
	cmd.Dir = "/"
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var err error
	if tty {
		err = runTTY(cmd, in, out, resize)
	} else {
		err = runPipes(cmd, in, out, errOut)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return utilexec.CodeExitError{Err: err, Code: ee.ExitCode()}
	}
	return err
}

// commandEnv is the environment of a command: the agent's would leak its
// own settings, so only what a container's shell would also have.
func commandEnv(tty bool, uid uint32) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	// HOME as runtimes set it without an image's passwd entry: root's, or
	// "/" for another user (who could not use /root).
	home := "/"
	if uid == 0 {
		home = "/root"
	}
	env := []string{"PATH=" + path, "HOME=" + home}
	if tty {
		env = append(env, "TERM=xterm") // what container runtimes set for -t
	}
	return env
}

// runPipes runs cmd with the streams on pipes. Stdin is copied without
// being waited for: a client that keeps stdin open must not keep the
// session alive after the command exits.
func runPipes(cmd *exec.Cmd, in io.Reader, out, errOut io.Writer) error {
	if out != nil {
		cmd.Stdout = out
	}
	if errOut != nil {
		cmd.Stderr = errOut
	}
	var stdin io.WriteCloser
	if in != nil {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return err
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if stdin != nil {
		go func() {
			_, _ = io.Copy(stdin, in)
			_ = stdin.Close()
		}()
	}
	return cmd.Wait()
}
