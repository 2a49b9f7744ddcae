// Package agentrole runs the node agent of `dnsplane up` as a control plane
// component: the agent (internal/agent) for this machine's node, and beside
// it the exec server (internal/podserver) that `kubectl exec` reaches
// through the API server, with a serving certificate from the cluster's CA.
// It starts after the DNS roles, because the nameservers it writes into
// pods' resolv.conf files are the addresses they ended up serving on.
package agentrole

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/agent"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/pki"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
	"github.com/dnsplane/dnsplane/internal/podserver"
)

// Config is the agent of `up`. Field comments name the flags.
type Config struct {
	NodeName      string // --node-name
	ClusterDomain string // --cluster-domain
	ResolvConf    string // --upstream-resolv-conf: the node's resolv.conf, $(HOST) of Custom pods
	PodCIDR       string // --pod-cidr
	// StateDir holds the pods' files; "" is <data-dir>/agent, where
	// `dnsplane exec --data-dir` looks.
	StateDir string
	// CertDir holds the exec server's serving certificate; "" is
	// <data-dir>/pki. Each node of `up --nodes N` has its own.
	CertDir string
	// Named says `up` runs several nodes: the component is "agent/NODE"
	// and logs name the node.
	Named bool
	// LeaseRenewInterval is how often the agent renews its Node's Lease;
	// 0 is kubelet's 10s. RenewIntervalFor derives it from the node
	// lifecycle controller's grace period.
	LeaseRenewInterval time.Duration
	// Gate, when set, wraps the agent so that it runs only while its node
	// is up (nodepower, `dnsplane node stop`).
	Gate func(controlplane.Component) controlplane.Component
	// DNS are the addresses (ADDR:PORT) pods are to ask, node cache first,
	// read once the DNS roles have started (their addresses settled).
	DNS func() []string
}

// Role is the agent as a control plane role.
type Role struct {
	cfg Config
	// port is the exec server's port once bound (0 before): the API
	// server dials only that for this node (AgentEndpoint).
	port atomic.Int32
}

// New returns the role for c.
func New(c Config) *Role { return &Role{cfg: c} }

// AgentEndpoint is where the API server may dial node's agent: this
// role's exec server, on loopback, once it listens
// (controlplane.AgentEndpointer).
func (r *Role) AgentEndpoint(node string) (netip.AddrPort, bool) {
	port := r.port.Load()
	if node != r.cfg.NodeName || port == 0 {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)), true //nolint:gosec // a TCP port
}

// RunsNode says the role runs node's agent (controlplane.NodeRunner).
func (r *Role) RunsNode(node string) bool { return node == r.cfg.NodeName }

// RenewIntervalFor is the Lease renew interval for a node lifecycle
// controller's --node-monitor-grace-period: kubelet's 10s renews five
// times within kube's 50s grace period; a grace period shorter than that
// (`up --node-monitor-grace-period 5s`, to see a node fail quickly) gets
// the same ratio, else a healthy node whose renewal is due in 10s goes
// Ready=Unknown between two renewals. 0 (not given) keeps kubelet's.
func RenewIntervalFor(grace time.Duration) time.Duration {
	const kubelet = 10 * time.Second
	if grace <= 0 || grace/5 >= kubelet {
		return 0
	}
	return max(grace/5, 100*time.Millisecond)
}

// KubeconfigPath is the agent's own kubeconfig (its node's identity) in
// its certificate dir, where kubelet keeps kubelet.conf's credentials.
func KubeconfigPath(certDir string) string { return filepath.Join(certDir, "kubelet.kubeconfig") }

// StateDir is where the agent writes pods' files for a data dir.
func StateDir(dataDir string) string { return filepath.Join(dataDir, "agent") }

// Validate implements controlplane.Role.
func (r *Role) Validate() error {
	if r.cfg.NodeName == "" {
		return controlplane.ConfigErrorf("--node-name: must not be empty")
	}
	if _, err := netip.ParsePrefix(r.cfg.PodCIDR); err != nil {
		return controlplane.ConfigErrorf("--pod-cidr %q: want a CIDR such as 10.244.0.0/24", r.cfg.PodCIDR)
	}
	if r.cfg.DNS == nil {
		return errors.New("agent role: no DNS addresses")
	}
	return nil
}

// Components implements controlplane.Role.
func (r *Role) Components(cl controlplane.Cluster) ([]controlplane.Component, error) {
	stateDir := r.cfg.StateDir
	if stateDir == "" {
		stateDir = StateDir(cl.DataDir)
	}
	certDir := r.cfg.CertDir
	if certDir == "" {
		certDir = filepath.Join(cl.DataDir, "pki")
	}
	// The agent is its node, as kubelet is: system:node:<name> in
	// system:nodes, which upstream's Node authorizer and NodeRestriction
	// confine to its own Node, Lease and pods (docs/apiserver.md#identities).
	kubeconfig := KubeconfigPath(certDir)
	if err := pki.WriteRoleKubeconfig(kubeconfig, cl.URL, cl.PKI, pki.NodeUserPrefix+r.cfg.NodeName, []string{pki.NodesGroup}); err != nil {
		return nil, fmt.Errorf("agent: node credentials: %w", err)
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("agent: reading its kubeconfig: %w", err)
	}
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	certFile, keyFile, err := pki.EnsureAgentServing(certDir, cl.PKI, []string{"127.0.0.1"})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	clientCA := x509.NewCertPool()
	clientCA.AddCert(cl.PKI.CA)
	logger, name := cl.Logger.With("role", "agent"), "agent"
	if r.cfg.Named {
		logger, name = logger.With("node", r.cfg.NodeName), "agent/"+r.cfg.NodeName
	}
	srv, err := podserver.New(podserver.Config{StateDir: stateDir, Pods: podserver.APILookup{Client: kube}, ClientCA: clientCA, Cert: cert,
		AllowedClients: []string{podserver.APIServerClient}, Logger: logger.With("server", "exec")})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	var comp controlplane.Component = &component{
		name: name, cfg: r.cfg, stateDir: stateDir, dataDir: cl.DataDir, restCfg: restCfg, srv: srv, logger: logger, bound: &r.port,
	}
	if r.cfg.Gate != nil {
		comp = r.cfg.Gate(comp)
	}
	return []controlplane.Component{comp}, nil
}

// component runs the agent and its exec server. It may be started again
// after its Run returned (`dnsplane node start`).
type component struct {
	name     string
	cfg      Config
	stateDir string
	dataDir  string
	restCfg  *rest.Config
	srv      *podserver.Server
	logger   *slog.Logger

	ln    net.Listener
	agent *agent.Agent
	// port is the exec server's port once bound: a restart binds it
	// again, so that the Node's daemon endpoint stays true.
	port int
	// bound publishes port to the role's AgentEndpoint.
	bound *atomic.Int32
}

func (c *component) Name() string { return c.name }

// Start binds the exec server's port (the Node reports it) and builds the
// agent with the DNS roles' settled addresses.
func (c *component) Start(context.Context) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)))
	if err != nil && c.port != 0 {
		// Taken while the node was stopped: another port, which the
		// agent reports in the Node's status.
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return fmt.Errorf("agent: exec server: %w", err)
	}
	var ips []string
	for _, addr := range c.cfg.DNS() {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("agent: DNS address %q: %w", addr, err)
		}
		if ap.Port() != 53 {
			// resolv.conf has no port: pods will ask ap.Addr():53. `up`
			// picks port 53 itself, so only an address the user gave
			// gets here (docs/operations.md, "Where up serves DNS").
			c.logger.Warn("a DNS server is not on port 53, so resolvers in pods cannot reach it (--dns-listen and --nodecache-listen on port 53 fix it)",
				"addr", addr)
		}
		ips = append(ips, ap.Addr().String())
	}
	port := ln.Addr().(*net.TCPAddr).Port
	c.port = port
	c.bound.Store(int32(port)) //nolint:gosec // a TCP port
	a, err := agent.New(agent.Config{
		Client: c.restCfg, NodeName: c.cfg.NodeName, ClusterDNS: ips, ClusterDomain: c.cfg.ClusterDomain,
		ResolvConf: c.cfg.ResolvConf, PodCIDR: c.cfg.PodCIDR, StateDir: c.stateDir, NodeIP: "127.0.0.1",
		LeaseRenewInterval: c.cfg.LeaseRenewInterval,
		NodeLabels:         map[string]string{agent.UpNodeLabel: "true"},
		DaemonPort:         int32(port), //nolint:gosec // a TCP port
		Logger:             c.logger,
		// Exec sessions run in each pod's sandbox, where the data dir is
		// hidden (docs/exec.md).
		Sandbox: &podsandbox.Config{Hide: []string{c.dataDir}},
	})
	if err != nil {
		_ = ln.Close()
		return &controlplane.ConfigError{Err: fmt.Errorf("agent: %w", err)}
	}
	c.ln, c.agent = ln, a
	c.logger.Info("agent", "node", c.cfg.NodeName, "cluster-dns", ips, "state-dir", c.stateDir, "exec-port", strconv.Itoa(port))
	return nil
}

// Run runs the agent and the exec server until ctx ends.
func (c *component) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.srv.Serve(gctx, c.ln) })
	g.Go(func() error { return c.agent.Run(gctx) })
	err := g.Wait()
	if ctx.Err() != nil {
		// Stopping: what the agent was doing was cut short on purpose.
		return nil
	}
	return err
}
