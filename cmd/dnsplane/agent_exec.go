package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/podserver"
)

// execServerFlags are kubelet's serving flags, for the agent's exec server
// (the API server's pods/exec proxies to it, docs/agent.md).
type execServerFlags struct {
	address, certFile, keyFile, clientCAFile string
	port                                     int
	anyClient                                bool
}

func (e *execServerFlags) register(f *pflag.FlagSet) {
	f.StringVar(&e.address, "address", "127.0.0.1", "address the exec server listens on, as kubelet --address")
	f.IntVar(&e.port, "port", 10250, "port of the exec server, as kubelet --port")
	f.StringVar(&e.certFile, "tls-cert-file", "", "the exec server's certificate, as kubelet's flag (no exec server without it)")
	f.StringVar(&e.keyFile, "tls-private-key-file", "", "the exec server's key, as kubelet's flag")
	f.StringVar(&e.clientCAFile, "client-ca-file", "", "CA of the client certificates the exec server accepts, as kubelet's flag")
	f.BoolVar(&e.anyClient, "allow-any-client-cert", false, "accept any certificate of --client-ca-file, not only the API server's ("+podserver.APIServerClient+")")
}

// start builds the exec server and binds its port; (nil, nil, nil) when
// --tls-cert-file is not given.
func (e *execServerFlags) start(cfg *rest.Config, stateDir string, logger *slog.Logger) (*podserver.Server, net.Listener, error) {
	if e.certFile == "" {
		return nil, nil, nil
	}
	if e.keyFile == "" || e.clientCAFile == "" {
		return nil, nil, &exitError{code: exitUsage, msg: "--tls-cert-file needs --tls-private-key-file and --client-ca-file: the exec server accepts only client certificates"}
	}
	cert, err := tls.LoadX509KeyPair(e.certFile, e.keyFile)
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--tls-cert-file: %v", err)}
	}
	pem, err := os.ReadFile(e.clientCAFile)
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--client-ca-file: %v", err)}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--client-ca-file %s: no PEM certificate", e.clientCAFile)}
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	c := podserver.Config{StateDir: stateDir, Pods: podserver.APILookup{Client: kube}, ClientCA: pool, Cert: cert,
		Logger: logger.With("server", "exec")}
	if !e.anyClient {
		c.AllowedClients = []string{podserver.APIServerClient}
	}
	srv, err := podserver.New(c)
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, msg: err.Error()}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(e.address, strconv.Itoa(e.port)))
	if err != nil {
		return nil, nil, fmt.Errorf("exec server: %w", err)
	}
	return srv, ln, nil
}
