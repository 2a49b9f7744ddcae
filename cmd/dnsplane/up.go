package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/dnsroles"
	"github.com/dnsplane/dnsplane/internal/controlplane/up"
	"github.com/dnsplane/dnsplane/internal/nodeplan"
)

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
	nodes           int
	// operatorHealthInterval is hidden: tests shorten the 10s.
	operatorHealthInterval time.Duration
	// stopDelay is hidden: tests of the forced exit make the stop slow.
	stopDelay time.Duration
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
--nodecache-listen "" runs without the node cache.

--nodes N (1 to 16) runs N nodes on this machine, node-1 to node-N, each
with its own agent, state dir (<data-dir>/nodes/NAME), exec server,
pod CIDR (the /24s of --pod-cidr, by default 10.244.1.0/24 to
10.244.N.0/24 of 10.244.0.0/16) and node cache: node i on the (i-1)-th
address after --nodecache-listen (127.0.20.10:53, 127.0.20.11:53, ...),
each moving on when held. Each pod's resolv.conf names its own node's
cache, then the one cluster DNS. "dnsplane node stop NAME" and "dnsplane
node start NAME" stop and start a node's agent and cache (docs/nodes.md).

Every component runs in this one process (etcd in a child of it). Once
everything serves, up writes <data-dir>/up.json for scripts (its pid, the
API server URL, the kubeconfig, the DNS addresses, each node) and removes it
when it stops; "dnsplane status" reads it and checks each component
(docs/operations.md, "Status and up.json").

While it starts, up reports each step and its duration on stderr (a live
status on a terminal, "started etcd in 0.31s" lines otherwise), then prints
the banner on stdout. One up (or apiserver) per --data-dir: another one on
the same dir is refused, naming its pid; a busy port names its flag and,
when /proc tells, the process that holds it. Ctrl-C or SIGTERM stops every
component in order within a few seconds; a second one forces the exit
(status 130 or 143). docs/operations.md, "Starting and stopping up".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return u.run(cmd) },
	}
	f := cmd.Flags()
	u.api.register(f)
	registerControllerFlags(f, &u.api.controllers, []string{"*"})
	f.StringVar(&u.dnsListen, "dns-listen", defaultDNSListen, "ADDR:PORT the cluster DNS serves on")
	f.StringVar(&u.nodeCacheListen, "nodecache-listen", defaultNodeCacheListen, `ADDR:PORT the node cache serves on ("" for no node cache)`)
	f.StringVar(&u.nodeCacheMetric, "nodecache-metrics", "", "ADDR:PORT for the node cache's Prometheus metrics (off when empty)")
	f.StringVar(&u.clusterDomain, "cluster-domain", "cluster.local", "cluster domain")
	f.UintVar(&u.optionCode, "option-code", 65534, "EDNS0 search list option code (65001-65534)")
	f.StringSliceVar(&u.upstreams, "upstream", nil, "ADDR[:PORT],... upstream resolvers (wins over --upstream-resolv-conf)")
	f.StringVar(&u.resolvConf, "upstream-resolv-conf", "/etc/resolv.conf", "resolv.conf with the node's upstream nameservers and host search list (also the agent's --resolv-conf)")
	f.StringVar(&u.nodeName, "node-name", defaultNodeName, "the Node the agent registers; pods reach it through spec.nodeName")
	f.StringVar(&u.podCIDR, "pod-cidr", "10.244.0.0/24", "the node's pod CIDR, where the agent gives pods their IPs; with --nodes N>1 the cluster's range, a /24 per node (default "+nodeplan.ClusterPodRange+")")
	f.IntVar(&u.nodes, "nodes", 1, "how many nodes to run on this machine (1-16): node-1 to node-N, each with an agent and a node cache; 1 runs the node --node-name")
	f.DurationVar(&u.operatorHealthInterval, "operator-health-interval", 0, "how often the DNS operator reads the forward health (tests)")
	_ = f.MarkHidden("operator-health-interval")
	f.DurationVar(&u.stopDelay, "test-stop-delay", 0, "make the ordered stop take this long (tests of the forced exit only)")
	_ = f.MarkHidden("test-stop-delay")
	return cmd
}

func (u *upFlags) run(cmd *cobra.Command) error {
	started := time.Now()
	upstreams, search, err := nodeResolvers(cmd, u.resolvConf, u.upstreams)
	if err != nil {
		return err
	}
	c, err := u.api.config(cmd)
	if err != nil {
		return err
	}
	checker, err := selfChecker()
	if err != nil {
		return err
	}
	flags := cmd.Flags()
	c, err = up.Assemble(up.Config{
		ControlPlane: c,
		Controllers:  u.api.controllers,
		DNS: dnsroles.Config{
			Listen:           u.dnsListen,
			ListenDefault:    !flags.Changed("dns-listen"),
			NodeCacheListen:  u.nodeCacheListen,
			NodeCacheDefault: !flags.Changed("nodecache-listen"),
			NodeCacheMetrics: u.nodeCacheMetric,
			ClusterDomain:    u.clusterDomain,
			OptionCode:       u.optionCode,
			Upstreams:        upstreams,
			HostSearch:       search,
		},
		Nodes: nodeplan.Flags{Nodes: u.nodes, NodeName: u.nodeName, NodeNameSet: flags.Changed("node-name"),
			PodCIDR: u.podCIDR, PodCIDRSet: flags.Changed("pod-cidr")},
		ResolvConf:             u.resolvConf,
		Checker:                checker,
		OperatorHealthInterval: u.operatorHealthInterval,
		StopDelay:              u.stopDelay,
		Version:                dnsplaneVersion(),
		Started:                started,
	})
	if _, ok := errors.AsType[*controlplane.ConfigError](err); ok {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if err != nil {
		return &exitError{code: exitInvalid, msg: err.Error()}
	}
	return runControlPlane(cmd, c, u.api.started)
}
