package main

import (
	"github.com/spf13/cobra"
	"time"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/dnsroles"
	"github.com/dnsplane/dnsplane/internal/controlplane/operatorrole"
)

// defaultServiceRange is the control plane's default
// --service-cluster-ip-range (controlplane.Config).
const defaultServiceRange = "10.96.0.0/12"

// The node cache listens where pods' resolv.conf points, port 53; without
// the privilege to bind it (or with it taken), `up` on its defaults moves
// to fallbackNodeCacheListen rather than failing the quick start.
const (
	defaultNodeCacheListen  = "127.0.0.1:53"
	fallbackNodeCacheListen = "127.0.0.1:1053"
)

// upFlags are the DNS flags of `up`, next to the API server's.
type upFlags struct {
	api             apiServerFlags
	dnsListen       string
	nodeCacheListen string
	clusterDomain   string
	optionCode      uint
	upstreams       []string
	resolvConf      string
	// operatorHealthInterval is hidden: tests shorten the 10s.
	operatorHealthInterval time.Duration
}

func newUpCommand() *cobra.Command {
	var u upFlags
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run dnsplane on this machine: API server, cluster DNS and node cache",
		Long: `Run dnsplane on this machine with an embedded etcd in --data-dir:
the API server, the cluster DNS (CoreDNS with the kubernetes plugin reading
the API server, and searchexpand for ClusterFirstWithAutopath names) on
--dns-listen, and the node cache (searchopt, cache, forwarding to the cluster
DNS and to the node's upstream resolvers) on --nodecache-listen. It prints
how to reach them with kubectl and dig.

The node cache listens on 127.0.0.1:53 by default. If that cannot be bound
(not root, or the port is taken) and the flag was not given, it listens on
127.0.0.1:1053 instead and says so; --nodecache-listen "" runs without it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return u.run(cmd) },
	}
	f := cmd.Flags()
	u.api.register(f)
	f.StringVar(&u.dnsListen, "dns-listen", "127.0.0.1:10053", "ADDR:PORT the cluster DNS serves on")
	f.StringVar(&u.nodeCacheListen, "nodecache-listen", defaultNodeCacheListen, `ADDR:PORT the node cache serves on ("" for no node cache)`)
	f.StringVar(&u.clusterDomain, "cluster-domain", "cluster.local", "cluster domain")
	f.UintVar(&u.optionCode, "option-code", 65534, "EDNS0 search list option code (65001-65534)")
	f.StringSliceVar(&u.upstreams, "upstream", nil, "ADDR[:PORT],... upstream resolvers (wins over --upstream-resolv-conf)")
	f.StringVar(&u.resolvConf, "upstream-resolv-conf", "/etc/resolv.conf", "resolv.conf with the node's upstream nameservers and host search list")
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
		Listen:          u.dnsListen,
		NodeCacheListen: u.nodeCacheListen,
		ClusterDomain:   u.clusterDomain,
		OptionCode:      u.optionCode,
		Upstreams:       upstreams,
		HostSearch:      search,
	}
	if !cmd.Flags().Changed("nodecache-listen") {
		dns.NodeCacheFallback = fallbackNodeCacheListen
	}
	dnsRoles := dnsroles.New(dns)
	c, err := u.api.config(cmd, dnsRoles)
	if err != nil {
		return err
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
	serviceRange := c.ServiceClusterIPRange
	if serviceRange == "" {
		serviceRange = defaultServiceRange
	}
	op := operatorrole.New(operatorrole.Config{ServiceRange: serviceRange, Render: ro, Checker: checker, Instances: dnsRoles.ClusterDNS(),
		HealthInterval: u.operatorHealthInterval})
	c.Roles = append([]controlplane.Role{op}, c.Roles...)
	return runControlPlane(cmd, c)
}
