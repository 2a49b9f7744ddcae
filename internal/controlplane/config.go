// Package controlplane assembles the cluster side of dnsplane: etcd
// (embedded, as a supervised child process or in-process, or external), the
// PKI and admin credentials, authentication, the API server and the objects
// a new cluster has, and then the components of its roles, which run
// beside the API server (the controllers, the scheduler, the DNS operator,
// the DNS servers and the nodes of `dnsplane up`), under one errgroup with
// an ordered stop.
//
// cmd/dnsplane turns flags into a Config and calls Run; tests call Start
// through controlplanetest.StartTestServer.
package controlplane

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"k8s.io/component-base/featuregate"

	"github.com/dnsplane/dnsplane/internal/agentdial"
	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/datadirlock"
	"github.com/dnsplane/dnsplane/internal/ipalloc"
	"github.com/dnsplane/dnsplane/internal/portalloc"
)

// DefaultServiceClusterIPRange is --service-cluster-ip-range's default,
// kubeadm's.
const DefaultServiceClusterIPRange = "10.96.0.0/12"

// Config is what `dnsplane apiserver` and `dnsplane up` run. Field comments
// name the flag each comes from, because errors name it too.
type Config struct {
	DataDir string // --data-dir: CA, certificates, tokens, kubeconfig and (embedded) etcd data
	// DataDirLock, when set, is DataDir's lock from ClaimDataDir, which
	// Start takes over (and releases on failure and at Stop); when nil,
	// Start claims DataDir itself.
	DataDirLock *datadirlock.Lock
	BindAddress string // --bind-address; default 127.0.0.1
	// AdvertiseAddress (--advertise-address) is the address the kubernetes
	// Service's endpoints name for this API server; "" chooses as
	// kube-apiserver does (advertiseAddress).
	AdvertiseAddress string
	SecurePort       int // --secure-port; 0 picks a free port
	// EtcdServers (--etcd-servers) selects an external etcd cluster; empty
	// runs an embedded single-member etcd under DataDir/etcd.
	EtcdServers                           []string
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	EtcdPrefix                            string // --etcd-prefix; default /registry
	ServiceClusterIPRange                 string // --service-cluster-ip-range; default 10.96.0.0/12
	ServiceNodePortRange                  string // --service-node-port-range; default 30000-32767
	// ClusterDomain is the cluster DNS's domain (`up --cluster-domain`),
	// which the DNS resource's rules keep forwarders out of; "" means
	// cluster.local.
	ClusterDomain string
	// TokenAuthFile (--token-auth-file) adds tokens to the generated admin
	// token (kube's CSV format); empty uses only DataDir/tokens.csv.
	TokenAuthFile string
	// AuthorizationModes (--authorization-mode) are the authorizers, in
	// order, behind system:masters (internal/authz); nil is
	// authz.DefaultModes (Node,RBAC).
	AuthorizationModes []string
	Gates              featuregate.FeatureGate
	Logger             *slog.Logger
	// CompactionInterval is how often old etcd revisions are compacted
	// (default 5m, as kube-apiserver).
	CompactionInterval time.Duration
	// BookmarkInterval overrides how often idle watches get a bookmark.
	BookmarkInterval time.Duration
	// EtcdMemberCommand, when set, runs the embedded etcd in a supervised
	// child process started with this command line (internal/etcdproc),
	// so that etcd failing never takes this process down; empty runs it
	// inside this process.
	EtcdMemberCommand []string
	// EtcdReadyTimeout bounds the child etcd's start (default 60s).
	EtcdReadyTimeout time.Duration
	// Limits bound connections, requests in flight and request time;
	// nil = filters.DefaultLimits(), kube-apiserver's.
	Limits *filters.Limits
	// AgentRules allow the agent endpoints pods/exec dials besides those
	// of the agents the roles run (AgentEndpointer): agentdial.Rules{}
	// (no special addresses, port 10250) when zero; the service CIDR is
	// always denied. docs/apiserver.md "Which agents the API server dials".
	AgentRules agentdial.Rules

	// AllowPrivileged (--allow-privileged, kube-apiserver's) lets pods have
	// privileged containers, whose exec'd commands run as root with root's
	// capabilities (docs/agent.md, "Who the command runs as"); Pod Security
	// admission still decides per namespace. false (kube's default) refuses
	// them in validation. Process-wide: Start fails when this process
	// already validates with the other value (upstream.AllowPrivileged).
	AllowPrivileged bool

	// Roles add components once the API server is up: `apiserver` runs
	// the controllers' (controllersrole), `up` those of package up (the
	// controllers, the scheduler, the DNS operator, the DNS servers, the
	// nodes); none runs the API server alone. Components start in order
	// and stop in reverse.
	Roles []Role
	// ShutdownTimeout bounds the API server's graceful stop (default 30s).
	ShutdownTimeout time.Duration
	// Progress hears each start-up step and its duration; nil hears
	// nothing.
	Progress Progress
}

// ConfigError is a Config that cannot run: a bad flag value. Its message
// names the flag. Callers report it as a usage error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ConfigErrorf is a *ConfigError with a formatted message.
func ConfigErrorf(format string, a ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, a...)}
}

// withDefaults fills in what an empty field means.
func (c Config) withDefaults() Config {
	if c.BindAddress == "" {
		c.BindAddress = "127.0.0.1"
	}
	if c.EtcdPrefix == "" {
		c.EtcdPrefix = "/registry"
	}
	if c.ServiceNodePortRange == "" {
		c.ServiceNodePortRange = portalloc.DefaultRange
	}
	if c.ServiceClusterIPRange == "" {
		c.ServiceClusterIPRange = DefaultServiceClusterIPRange
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.CompactionInterval == 0 {
		c.CompactionInterval = 5 * time.Minute
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	if c.AuthorizationModes == nil {
		c.AuthorizationModes = authz.DefaultModes()
	}
	if c.Progress == nil {
		c.Progress = noProgress{}
	}
	return c
}

// Validate checks everything that can be checked before anything starts
// (no etcd, no files, no listeners), so a bad flag leaves nothing behind.
// Every error is a *ConfigError naming the flag.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, ConfigErrorf("--data-dir: must not be empty"))
	}
	if c.SecurePort < 0 || c.SecurePort > 65535 {
		errs = append(errs, ConfigErrorf("--secure-port %d: want a port number, 0-65535 (0 picks a free one)", c.SecurePort))
	}
	if _, err := portalloc.ParseRange(c.ServiceNodePortRange); err != nil {
		errs = append(errs, ConfigErrorf("--service-node-port-range: %v", err))
	}
	if err := ipalloc.CheckRange(c.ServiceClusterIPRange); err != nil {
		errs = append(errs, ConfigErrorf("--service-cluster-ip-range %q: %s", c.ServiceClusterIPRange,
			strings.TrimPrefix(err.Error(), "service IP range: ")))
	}
	if a := c.AdvertiseAddress; a != "" && net.ParseIP(a) == nil {
		errs = append(errs, ConfigErrorf("--advertise-address %q: want an IP address", a))
	}
	if err := authz.ValidateModes(c.AuthorizationModes); err != nil {
		errs = append(errs, &ConfigError{Err: fmt.Errorf("--authorization-mode: %w", err)})
	}
	if !strings.HasPrefix(c.EtcdPrefix, "/") {
		errs = append(errs, ConfigErrorf("--etcd-prefix %q: want a key prefix starting with /", c.EtcdPrefix))
	}
	if c.Limits != nil {
		if err := c.Limits.Validate(); err != nil {
			errs = append(errs, &ConfigError{Err: err})
		}
	}
	for _, r := range c.Roles {
		if err := r.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return &ConfigError{Err: errors.Join(errs...)}
}
