package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/agentrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/dnsroles"
	"github.com/dnsplane/dnsplane/internal/controlplane/operatorrole"
)

// defaultServiceRange is the control plane's default
// --service-cluster-ip-range (controlplane.Config).
const defaultServiceRange = "10.96.0.0/12"

// defaultNodeName is the Node `up`'s agent registers: fixed rather than
// the host name (kubelet's default), so that manifests in docs/ and
// examples/ can name it in spec.nodeName, as kind and minikube name theirs.
const defaultNodeName = "dnsplane"

// The node cache and the cluster DNS each listen on a loopback address of
// their own, port 53, because that is the only port a pod's resolv.conf
// can name (glibc and musl take no port): the node agent of `up` writes
// both addresses into pods' files (docs/agent.md). They mirror a real
// cluster's 169.254.20.10 (NodeLocal DNSCache) and 10.96.0.10 (the DNS
// Service); Linux routes all of 127.0.0.0/8 to lo, so no interface
// changes. A default another process holds moves to the next free
// loopback address on port 53 (dnsroles.MoveRange); without the privilege
// for port 53, `up` refuses to start rather than serve where pods cannot
// ask (docs/operations.md, "Where up serves DNS").
const (
	defaultDNSListen       = "127.0.10.10:53"
	defaultNodeCacheListen = "127.0.20.10:53"
)

// upFlags are the DNS flags of `up`, next to the API server's.
type upFlags struct {
	api             apiServerFlags
	dnsListen       string
	nodeCacheListen string
	nodeCacheMetric string
	clusterDomain   string
	optionCode      uint
	upstreams       []string
	resolvConf      string
	nodeName        string
	podCIDR         string
	// operatorHealthInterval is hidden: tests shorten the 10s.
	operatorHealthInterval time.Duration
}

func newUpCommand() *cobra.Command {
	var u upFlags
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run dnsplane on this machine: API server, controllers, scheduler, DNS operator, cluster DNS, node cache and node agent",
		Long: `Run dnsplane on this machine with an embedded etcd in --data-dir:
the API server, upstream's controllers and scheduler (docs/controllers.md),
the DNS operator, a node agent for the node --node-name, the cluster DNS (CoreDNS with the kubernetes plugin reading
the API server, and searchexpand for ClusterFirstWithAutopath names) on
--dns-listen, and the node cache (searchopt, cache, forwarding to the cluster
DNS and to the node's upstream resolvers) on --nodecache-listen. It prints
how to reach them with kubectl and dig.

The cluster DNS listens on 127.0.10.10:53 and the node cache on
127.0.20.10:53 by default: port 53, because pods' resolv.conf files name
them and resolvers take no port. If another process holds one and its flag
was not given, it moves to the next free address on port 53 (127.0.10.11 to
127.0.10.19, 127.0.20.11 to 127.0.20.19) and says so. Without the privilege
for port 53 (root or CAP_NET_BIND_SERVICE), up refuses to start. Addresses
given with the flags are never moved; on a port other than 53 they serve
dig and kubectl but not pods, whose resolvers ask port 53 only.
--nodecache-listen "" runs without the node cache.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return u.run(cmd) },
	}
	f := cmd.Flags()
	u.api.register(f)
	registerControllerFlags(f, &u.api.c.Controllers, []string{"*"})
	f.StringVar(&u.dnsListen, "dns-listen", defaultDNSListen, "ADDR:PORT the cluster DNS serves on")
	f.StringVar(&u.nodeCacheListen, "nodecache-listen", defaultNodeCacheListen, `ADDR:PORT the node cache serves on ("" for no node cache)`)
	f.StringVar(&u.nodeCacheMetric, "nodecache-metrics", "", "ADDR:PORT for the node cache's Prometheus metrics (off when empty)")
	f.StringVar(&u.clusterDomain, "cluster-domain", "cluster.local", "cluster domain")
	f.UintVar(&u.optionCode, "option-code", 65534, "EDNS0 search list option code (65001-65534)")
	f.StringSliceVar(&u.upstreams, "upstream", nil, "ADDR[:PORT],... upstream resolvers (wins over --upstream-resolv-conf)")
	f.StringVar(&u.resolvConf, "upstream-resolv-conf", "/etc/resolv.conf", "resolv.conf with the node's upstream nameservers and host search list (also the agent's --resolv-conf)")
	f.StringVar(&u.nodeName, "node-name", defaultNodeName, "the Node the agent registers; pods reach it through spec.nodeName")
	f.StringVar(&u.podCIDR, "pod-cidr", "10.244.0.0/24", "the node's pod CIDR, where the agent gives pods their IPs")
	f.DurationVar(&u.operatorHealthInterval, "operator-health-interval", 0, "how often the DNS operator reads the forward health (tests)")
	_ = f.MarkHidden("operator-health-interval")
	return cmd
}

func (u *upFlags) run(cmd *cobra.Command) error {
	upstreams, search, err := nodeResolvers(cmd, u.resolvConf, u.upstreams)
	if err != nil {
		return err
	}
	dns := dnsroles.Config{
		Listen:           u.dnsListen,
		ListenDefault:    !cmd.Flags().Changed("dns-listen"),
		NodeCacheListen:  u.nodeCacheListen,
		NodeCacheDefault: !cmd.Flags().Changed("nodecache-listen"),
		NodeCacheMetrics: u.nodeCacheMetric,
		ClusterDomain:    u.clusterDomain,
		OptionCode:       u.optionCode,
		Upstreams:        upstreams,
		HostSearch:       search,
	}
	dnsRoles := dnsroles.New(dns)
	c, err := u.api.config(cmd, dnsRoles)
	if err != nil {
		return err
	}
	// Bad flags are refused before anything is probed or logged
	// (docs/apiserver.md); only then are the DNS addresses probed, before
	// etcd starts, so that a refused address leaves nothing behind.
	if err := c.Validate(); err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if err := dnsRoles.ChooseAddresses(c.Logger); err != nil {
		return &exitError{code: exitInvalid, msg: err.Error()}
	}
	// The DNS operator renders the cluster DNS's Corefile with `up`'s DNS
	// flags and publishes it before the cluster DNS starts serving it: its
	// role comes first (docs/dns-operator.md, "In dnsplane up").
	ro, err := dnsRoles.RenderOptions()
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	checker, err := selfChecker()
	if err != nil {
		return err
	}
	c.ClusterDomain = u.clusterDomain
	c.Scheduler = true
	serviceRange := c.ServiceClusterIPRange
	if serviceRange == "" {
		serviceRange = defaultServiceRange
	}
	op := operatorrole.New(operatorrole.Config{ServiceRange: serviceRange, Render: ro, Checker: checker, Instances: dnsRoles.ClusterDNS(),
		HealthInterval: u.operatorHealthInterval})
	c.Roles = append([]controlplane.Role{op}, c.Roles...)
	// The agent comes last: pods' resolv.conf names the node cache and
	// then the cluster DNS where they ended up serving (docs/agent.md).
	c.Roles = append(c.Roles, agentrole.New(agentrole.Config{
		NodeName: u.nodeName, ClusterDomain: u.clusterDomain, ResolvConf: u.resolvConf, PodCIDR: u.podCIDR,
		DNS: func() []string {
			var addrs []string
			if nc := dnsRoles.NodeCacheListen(); nc != "" {
				addrs = append(addrs, nc)
			}
			return append(addrs, dnsRoles.Listen())
		},
	}))
	return runControlPlane(cmd, c)
}
