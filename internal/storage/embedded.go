package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"

	"github.com/dnsplane/dnsplane/internal/pki"
)

// Embedded is a single-member etcd running inside this process.
type Embedded struct {
	etcd      *embed.Etcd
	endpoints []string
	peers     []string
	// client is how to connect: endpoints, the etcd CA and, when
	// StartEmbedded made the PKI itself, the client certificate.
	client    ClientConfig
	unlock    func() error
	closeOnce sync.Once
	// closing quiets etcd's log while we stop it on purpose.
	closing *atomic.Bool
}

// StartEmbedded starts a single-member etcd whose data lives in dataDir and waits (bounded
// by ctx) until it serves requests. It listens on 127.0.0.1 only, on ports the kernel
// picks, so several instances (tests, or one per data dir) never collide. etcd's own
// log goes to logger at warn level and above.
//
// Both its client and its peer URL are https and require a client certificate
// signed by etcd's own CA, as kubeadm configures a stacked etcd
// (--client-cert-auth, --peer-client-cert-auth): loopback is shared with every
// local process, pods' exec sessions included, and a plaintext etcd would hand
// them every Secret and RBAC object (issue 29). The certificates are WithTLS's;
// without it StartEmbedded makes them in <dataDir>/pki (pki.EnsureEtcd) and
// ClientConfig carries the client certificate.
//
// Durability is etcd's: every acknowledged write has been fsynced to its WAL, so a
// restart on the same dataDir, graceful or not, keeps it.
func StartEmbedded(ctx context.Context, dataDir string, logger *slog.Logger, opts ...EmbeddedOption) (*Embedded, error) {
	var o embeddedOptions
	for _, opt := range opts {
		opt(&o)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating etcd data dir: %w", err)
	}
	// bbolt waits forever for the lock on its database file, so a second process on
	// the same data dir would hang instead of failing; take our own lock first.
	unlock, err := lockDir(dataDir)
	if err != nil {
		return nil, err
	}
	// etcd waits forever or panics on a damaged single-member data dir;
	// find that first and say what is damaged.
	o.phase(PhaseCheckingDataDir)
	if err := CheckDataDir(dataDir); err != nil {
		return nil, errors.Join(err, unlock())
	}
	if o.checkPages {
		o.phase(PhaseCheckingPages)
		if err := CheckDatabasePages(dataDir); err != nil {
			return nil, errors.Join(err, unlock())
		}
	}
	o.phase(PhaseStarting)

	client := ClientConfig{}
	if o.tls == nil {
		p, err := pki.EnsureEtcd(filepath.Join(dataDir, "pki"))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("embedded etcd in %s: %w", dataDir, err), unlock())
		}
		o.tls = &EmbeddedTLS{TrustedCAFile: p.CAFile, CertFile: p.ServerCertFile, KeyFile: p.ServerKeyFile,
			PeerCertFile: p.PeerCertFile, PeerKeyFile: p.PeerKeyFile}
		client.CertFile, client.KeyFile = p.ClientCertFile, p.ClientKeyFile
	}
	if err := o.tls.validate(); err != nil {
		return nil, errors.Join(err, unlock())
	}
	client.CAFile = o.tls.TrustedCAFile

	cfg := embed.NewConfig()
	cfg.Name = "dnsplane"
	cfg.Dir = dataDir
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: o.tls.CertFile, KeyFile: o.tls.KeyFile,
		TrustedCAFile: o.tls.TrustedCAFile, ClientCertAuth: true}
	cfg.PeerTLSInfo = transport.TLSInfo{CertFile: o.tls.PeerCertFile, KeyFile: o.tls.PeerKeyFile,
		TrustedCAFile: o.tls.TrustedCAFile, ClientCertAuth: true}
	// Port 0: the kernel assigns free ports, race-free. The advertised URLs therefore
	// carry port 0; nothing uses them in a single-member cluster (no peers dial us and
	// our clients do not sync endpoints), and on restart etcd keeps the membership
	// recorded in its WAL rather than re-checking these.
	loopback := url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls = []url.URL{loopback}
	cfg.AdvertiseClientUrls = []url.URL{loopback}
	cfg.ListenPeerUrls = []url.URL{loopback}
	cfg.AdvertisePeerUrls = []url.URL{loopback}
	// With TLS and no separate HTTP URL, etcd serves gRPC through its HTTP
	// server (grpc.Server.ServeHTTP behind cmux), which doubled a Get's time
	// here (87 → 170 µs); a separate HTTP URL makes the client URL gRPC-only,
	// on gRPC's own transport (etcd's --listen-client-http-urls). The HTTP
	// side (/health, /metrics, /version) goes to a unix socket in the 0700
	// data dir, behind the same client certificate check, so that up opens
	// no third port.
	if sock := filepath.Join(dataDir, httpSocketName); len(sock) < maxUnixSocketPath {
		cfg.ListenClientHttpUrls = []url.URL{{Scheme: "unixs", Path: sock}}
	} else {
		logger.Info("embedded etcd serves gRPC through its HTTP handler, slower: the data dir's path is too long for a unix socket",
			"socket", sock)
	}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// The gateway would dial the listen address (port 0) and nothing of ours uses it.
	cfg.EnableGRPCGateway = false
	cfg.Logger = "zap"
	cfg.LogOutputs = []string{"stderr"} // never consulted: the builder below replaces the sink
	closing := new(atomic.Bool)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(newZapLogger(logger.With("component", "etcd"), zapcore.WarnLevel, closing))

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting embedded etcd in %s: %w", dataDir, err), unlock())
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		closing.Store(true)
		e.Close()
		return nil, errors.Join(fmt.Errorf("starting embedded etcd in %s: %w", dataDir, err), unlock())
	case <-ctx.Done():
		closing.Store(true)
		e.Close()
		return nil, errors.Join(fmt.Errorf("waiting for embedded etcd in %s to become ready: %w", dataDir, ctx.Err()), unlock())
	}

	emb := &Embedded{etcd: e, unlock: unlock, closing: closing}
	for _, l := range e.Clients {
		if l.Addr().Network() == "tcp" { // not the HTTP socket
			emb.endpoints = append(emb.endpoints, "https://"+l.Addr().String())
		}
	}
	for _, p := range e.Peers {
		emb.peers = append(emb.peers, "https://"+p.Listener.Addr().String())
	}
	client.Endpoints = emb.Endpoints()
	emb.client = client
	logger.Info("embedded etcd ready", "dataDir", dataDir, "endpoints", emb.endpoints, "peerURLs", emb.peers,
		"clientCertAuth", true)
	return emb, nil
}

// httpSocketName is etcd's HTTP endpoint (health, metrics, version) in its
// data dir.
const httpSocketName = "etcd-http.sock"

// maxUnixSocketPath is what sockaddr_un holds with room for the NUL:
// 108 bytes on Linux, 104 on the BSDs and macOS.
const maxUnixSocketPath = 104

// Phases of StartEmbedded, reported to WithPhases.
const (
	PhaseCheckingDataDir = "checking the data dir"
	PhaseCheckingPages   = "checking every database page"
	PhaseStarting        = "starting etcd"
)

// EmbeddedOption changes how StartEmbedded starts etcd.
type EmbeddedOption func(*embeddedOptions)

type embeddedOptions struct {
	checkPages bool
	onPhase    func(string)
	tls        *EmbeddedTLS
}

// EmbeddedTLS are the member's certificate files, named after etcd's flags.
// TrustedCAFile is the CA that signs the only accepted client and peer
// certificates; nothing else may be signed by it (pki.EnsureEtcd).
type EmbeddedTLS struct {
	TrustedCAFile             string // --trusted-ca-file and --peer-trusted-ca-file
	CertFile, KeyFile         string // --cert-file, --key-file
	PeerCertFile, PeerKeyFile string // --peer-cert-file, --peer-key-file
}

func (t *EmbeddedTLS) validate() error {
	for _, f := range []struct{ flag, v string }{
		{"trusted CA file", t.TrustedCAFile}, {"cert file", t.CertFile}, {"key file", t.KeyFile},
		{"peer cert file", t.PeerCertFile}, {"peer key file", t.PeerKeyFile},
	} {
		if f.v == "" {
			return fmt.Errorf("embedded etcd TLS: no %s", f.flag)
		}
	}
	return nil
}

// WithTLS has the member serve with these certificates, made by the caller
// (the API server's side, which keeps the client certificate to itself).
func WithTLS(t EmbeddedTLS) EmbeddedOption { return func(o *embeddedOptions) { o.tls = &t } }

func (o *embeddedOptions) phase(p string) {
	if o.onPhase != nil {
		o.onPhase(p)
	}
}

// WithPageCheck makes StartEmbedded read every page of the database before
// etcd opens it (CheckDatabasePages). Damage can then panic the process:
// use it only where that is contained, as in the etcd child process.
func WithPageCheck() EmbeddedOption { return func(o *embeddedOptions) { o.checkPages = true } }

// WithPhases has StartEmbedded call report as it enters each phase, so that
// a supervisor can tell what a process that died during start-up was doing.
func WithPhases(report func(phase string)) EmbeddedOption {
	return func(o *embeddedOptions) { o.onPhase = report }
}

// Endpoints are the client URLs (https) to pass to Connect, with a client
// certificate from the etcd CA.
func (e *Embedded) Endpoints() []string { return slices.Clone(e.endpoints) }

// PeerURLs are the URLs the member listens on for peers (https, client
// certificate required like its client URLs).
func (e *Embedded) PeerURLs() []string { return slices.Clone(e.peers) }

// ClientConfig is how to connect to this member: its endpoints, the etcd CA
// and, when StartEmbedded made the PKI (no WithTLS), the client certificate.
func (e *Embedded) ClientConfig() ClientConfig {
	c := e.client
	c.Endpoints = slices.Clone(c.Endpoints)
	return c
}

// Err reports a fatal error of the running etcd (the process should shut down).
func (e *Embedded) Err() <-chan error { return e.etcd.Err() }

// Close stops etcd gracefully. Close clients first: etcd waits for open streams
// (watches) up to its request timeout before cutting them.
func (e *Embedded) Close() error {
	var err error
	e.closeOnce.Do(func() {
		e.closing.Store(true)
		e.etcd.Close()
		err = e.unlock()
	})
	return err
}
