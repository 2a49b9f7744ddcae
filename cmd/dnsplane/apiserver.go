package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/dnsplane/dnsplane/internal/agentdial"
	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/cliexit"
	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
	"github.com/dnsplane/dnsplane/internal/features"
	"github.com/dnsplane/dnsplane/internal/startlog"
)

// apiServerFlags are the flags shared by `apiserver` and `up`.
type apiServerFlags struct {
	c controlplane.Config
	// controllers are the in-process controllers' flags
	// (registerControllerFlags), which their role takes.
	controllers controllers.Options
	limits      filters.Limits
	gates       string
	logLevel    string
	verbose     bool
	// started lets the logs below warnings through once the banner is
	// out (internal/startlog); nil with -v.
	started func()
	// The agent endpoints pods/exec may dial (agentdial.Rules).
	agentNetworks []net.IPNet
	agentPorts    []uint
}

func (a *apiServerFlags) register(f *pflag.FlagSet) {
	c := &a.c
	f.StringVar(&c.DataDir, "data-dir", defaultDataDir(), "directory for certificates, credentials, the kubeconfig and embedded etcd data")
	f.StringVar(&c.BindAddress, "bind-address", "127.0.0.1", "address to serve HTTPS on")
	f.IntVar(&c.SecurePort, "secure-port", 6443, "port to serve HTTPS on (0 picks a free one)")
	f.StringVar(&c.AdvertiseAddress, "advertise-address", "", "IP address the kubernetes Service's endpoints name for this API server (default: --bind-address, or the host's default-route address when that is a wildcard or loopback)")
	f.StringSliceVar(&c.EtcdServers, "etcd-servers", nil, "external etcd client URLs (default: embedded etcd in --data-dir)")
	f.StringVar(&c.EtcdCAFile, "etcd-cafile", "", "CA bundle to verify the etcd servers")
	f.StringVar(&c.EtcdCertFile, "etcd-certfile", "", "client certificate for etcd")
	f.StringVar(&c.EtcdKeyFile, "etcd-keyfile", "", "client key for etcd")
	f.StringVar(&c.EtcdPrefix, "etcd-prefix", "/registry", "key prefix of every object in etcd")
	f.DurationVar(&c.EtcdReadyTimeout, "etcd-ready-timeout", 60*time.Second, "how long the embedded etcd may take to start before start-up fails")
	f.DurationVar(&c.CompactionInterval, "etcd-compaction-interval", 5*time.Minute, "how often old etcd revisions are compacted, as kube-apiserver")
	f.StringVar(&c.ServiceClusterIPRange, "service-cluster-ip-range", controlplane.DefaultServiceClusterIPRange, "CIDR Service cluster IPs are allocated from")
	f.StringVar(&c.ServiceNodePortRange, "service-node-port-range", "30000-32767", "the ports NodePort and LoadBalancer Services get their node ports from (MIN-MAX or BASE+SIZE); up runs no kube-proxy, so nothing listens on them")
	f.StringVar(&c.TokenAuthFile, "token-auth-file", "", `extra bearer tokens, one "token,user,uid,\"group1,group2\"" per line`)
	f.StringSliceVar(&c.AuthorizationModes, "authorization-mode", authz.DefaultModes(),
		"ordered list of authorizers, as kube-apiserver's: AlwaysAllow, AlwaysDeny, Node, RBAC (system:masters is always allowed)")
	// kube-apiserver's flag, help text and default: privileged containers
	// are what exec runs as root (docs/agent.md, "Who the command runs as").
	f.BoolVar(&c.AllowPrivileged, "allow-privileged", false, "If true, allow privileged containers. [default=false]")
	f.StringVar(&a.gates, "feature-gates", "", "comma-separated Name=true|false pairs: RelaxedDNSSearchValidation, PodDNSCustomPolicy, PodDNSAutopath, ServerSideFieldValidation")
	f.StringVar(&a.logLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVarP(&a.verbose, "verbose", "v", false, "log at --log-level from the start (default: warnings and errors only until the banner, then --log-level)")
	f.IPNetSliceVar(&a.agentNetworks, "kubelet-allowed-networks", nil,
		"CIDRs of the node agents' addresses that pods/exec may dial (default: any address but loopback, link-local, unspecified and multicast; never the service CIDR)")
	f.UintSliceVar(&a.agentPorts, "kubelet-allowed-ports", []uint{agentdial.DefaultPort},
		"the node agents' exec ports (status.daemonEndpoints.kubeletEndpoint.port) that pods/exec may dial")
	a.registerLimits(f)
}

// registerLimits adds kube-apiserver's request limit flags (same names and
// defaults) and the connection limit, which is ours.
func (a *apiServerFlags) registerLimits(f *pflag.FlagSet) {
	l := &a.limits
	*l = filters.DefaultLimits()
	f.IntVar(&l.MaxRequestsInflight, "max-requests-inflight", l.MaxRequestsInflight,
		"maximum number of non-mutating requests (get, list) served at once; more get 429 with Retry-After. Watches and health probes are not counted. 0 = no limit")
	f.IntVar(&l.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", l.MaxMutatingRequestsInflight,
		"maximum number of mutating requests (create, update, patch, delete) served at once; more get 429 with Retry-After. 0 = no limit")
	f.DurationVar(&l.RequestTimeout, "request-timeout", l.RequestTimeout,
		"deadline of every request but watches; a smaller ?timeout= on the request wins. Requests over it get 504. 0 = no deadline")
	f.IntVar(&l.MaxConnections, "max-connections", 0,
		"maximum number of open HTTPS connections; more are closed as soon as they are accepted. 0 = derived from the open files limit, keeping descriptors for etcd and DNS")
}

// config turns the flags into the control plane's config with roles
// beside the API server (none for `apiserver`).
func (a *apiServerFlags) config(cmd *cobra.Command, roles ...controlplane.Role) (controlplane.Config, error) {
	fg, err := features.Parse(a.gates)
	if err != nil {
		return controlplane.Config{}, &exitError{code: exitUsage, msg: err.Error()}
	}
	// Start-up progress and the logs share stderr; on a terminal the
	// logs pass through the live status so that neither tears the other.
	progress := startProgress(cmd.ErrOrStderr())
	logger, err := newLogger(progress.Writer(cmd.ErrOrStderr()), a.logLevel)
	if err != nil {
		return controlplane.Config{}, &exitError{code: exitUsage, msg: err.Error()}
	}
	if !a.verbose {
		quiet := startlog.New(logger.Handler())
		logger, a.started = slog.New(quiet), quiet.Started
		// Upstream's libraries log through klog's global logger (informers,
		// the apiserver's own controllers): through ours, their info lines
		// wait for the banner too.
		klog.SetSlogLogger(logger)
	}
	c := a.c
	for _, n := range a.agentNetworks {
		p, err := netip.ParsePrefix(n.String())
		if err != nil {
			return controlplane.Config{}, &exitError{code: exitUsage, msg: fmt.Sprintf("--kubelet-allowed-networks: %s is not a CIDR", n.String())}
		}
		c.AgentRules.Networks = append(c.AgentRules.Networks, p)
	}
	for _, port := range a.agentPorts {
		if port == 0 || port > 65535 {
			return controlplane.Config{}, &exitError{code: exitUsage, msg: fmt.Sprintf("--kubelet-allowed-ports: %d is not a port", port)}
		}
		c.AgentRules.Ports = append(c.AgentRules.Ports, uint16(port))
	}
	limits := a.limits
	c.Gates, c.Logger, c.Limits, c.Roles, c.Progress = fg, logger, &limits, roles, progress
	if len(c.EtcdServers) == 0 {
		// The embedded etcd runs in a child process of this binary, so that
		// its failures (a full disk, too many open files, a damaged data
		// dir) never take down what else runs here: docs/operations.md.
		exe, err := os.Executable()
		if err != nil {
			return controlplane.Config{}, &exitError{code: exitInvalid, msg: fmt.Sprintf("finding this binary to run the embedded etcd: %v", err)}
		}
		c.EtcdMemberCommand = []string{exe, etcdMemberCommand}
	}
	return c, nil
}

// runControlPlane checks the config before anything starts, runs the
// control plane until the command's context ends (SIGINT/SIGTERM), printing
// its banner once it is up, and maps its errors to exit statuses.
// started, when set, is called right after the banner (apiServerFlags).
func runControlPlane(cmd *cobra.Command, c controlplane.Config, started func()) error {
	if err := c.Validate(); err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	err := runWithProgress(cmd, c, func(cp *controlplane.ControlPlane) {
		fmt.Fprint(cmd.OutOrStdout(), cp.Banner())
		if started != nil {
			started()
		}
	})
	if _, ok := errors.AsType[*controlplane.ConfigError](err); ok {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if err != nil {
		return &exitError{code: exitInvalid, msg: err.Error()}
	}
	return nil
}

func newAPIServerCommand() *cobra.Command {
	var a apiServerFlags
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run the Kubernetes-compatible API server over etcd",
		Long: `Run the Kubernetes-compatible API server. By default it runs an embedded
single-member etcd in --data-dir; --etcd-servers uses an external etcd cluster.
On first start it writes a CA, a serving certificate, an admin token and an
admin kubeconfig (<data-dir>/kubeconfig) that kubectl can use as is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// What kube-apiserver leaves to kube-controller-manager, in
			// this process: by default emptying a Terminating namespace and
			// collecting an owner's dependents (docs/apiserver.md, "Deletion").
			c, err := a.config(cmd, controllersrole.New(a.controllers))
			if err != nil {
				return err
			}
			return runControlPlane(cmd, c, a.started)
		},
	}
	a.register(cmd.Flags())
	registerControllerFlags(cmd.Flags(), &a.controllers, controllersrole.DeletionControllers())
	return cmd
}

func defaultDataDir() string {
	if dir, err := os.UserHomeDir(); err == nil {
		return filepath.Join(dir, ".dnsplane")
	}
	return ".dnsplane"
}

// clientConfig reads --kubeconfig for the commands that are API clients
// (agent, operator, dns --configmap); errors are usage errors naming the
// flag.
func clientConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return nil, &exitError{code: exitUsage, msg: "--kubeconfig is required"}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("--kubeconfig: %v", err)}
	}
	return cfg, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	return cliexit.NewLogger(w, level)
}
