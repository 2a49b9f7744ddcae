package main

import (
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/dnsplane/dnsplane/internal/agent"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
)

func newAgentCommand() *cobra.Command {
	var (
		c          agent.Config
		kubeconfig string
		logLevel   string
		daemonPort int
		apiQPS     float32
		apiBurst   int
		exec       execServerFlags
	)
	cmd := &cobra.Command{
		Use:   "agent --kubeconfig FILE --pod-cidr CIDR",
		Short: "Run the node agent: kubelet's DNS part (pod resolv.conf and hosts files, pod IPs, status, node lease)",
		Long: `Run the node agent against the API server of --kubeconfig: the DNS part of
kubelet. It registers the Node --node-name and renews its Lease in
kube-node-lease, and for every pod bound to the node writes the pod's
resolv.conf and hosts under --state-dir/pods/<namespace>_<name>_<uid>/
(shortened with a hash when over 255 bytes), gives the pod an IP from
--pod-cidr, reports it Running with kubelet's DNS events, and finishes its
deletion. A pod over the node's pods capacity is rejected (Failed, OutOfpods)
as by kubelet. There are no containers. See docs/agent.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := clientConfig(kubeconfig)
			if err != nil {
				return err
			}
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if daemonPort < 0 || daemonPort > 65535 {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("--daemon-port %d: not a port", daemonPort)}
			}
			srv, ln, err := exec.start(cfg, c.StateDir, logger)
			if err != nil {
				return err
			}
			if ln != nil {
				daemonPort = ln.Addr().(*net.TCPAddr).Port
			}
			if apiQPS <= 0 || apiBurst <= 0 {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("--kube-api-qps %v, --kube-api-burst %d: want both above 0", apiQPS, apiBurst)}
			}
			cfg.QPS, cfg.Burst = apiQPS, apiBurst
			c.Client, c.Logger, c.DaemonPort = cfg, logger, int32(daemonPort) //nolint:gosec // range checked above
			if os.Geteuid() == 0 {
				// Exec sessions, the exec server's and dnsplane exec's, run
				// in the pods' sandboxes, which only root can create
				// (docs/exec.md).
				c.Sandbox = &podsandbox.Config{}
			}
			a, err := agent.New(c)
			if err != nil {
				if ln != nil {
					_ = ln.Close()
				}
				return &exitError{code: exitUsage, msg: err.Error()}
			}
			if srv == nil {
				return a.Run(cmd.Context())
			}
			g, ctx := errgroup.WithContext(cmd.Context())
			g.Go(func() error { return srv.Serve(ctx, ln) })
			g.Go(func() error { return a.Run(ctx) })
			return g.Wait()
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the API server")
	f.StringVar(&c.NodeName, "node-name", "", "the Node's name (default: the host name)")
	f.StringSliceVar(&c.ClusterDNS, "cluster-dns", []string{"10.96.0.10"}, `cluster DNS IPs, as kubelet --cluster-dns: the nameservers of every cluster policy (list the node cache first for failover, e.g. "169.254.20.10,10.96.0.10")`)
	f.StringVar(&c.ClusterDomain, "cluster-domain", "cluster.local", "cluster domain, as kubelet --cluster-domain")
	f.StringVar(&c.ResolvConf, "resolv-conf", "/etc/resolv.conf", `the node's resolv.conf, as kubelet --resolv-conf ("" = none: 127.0.0.1 and "search .")`)
	f.StringVar(&c.PodCIDR, "pod-cidr", "10.244.0.0/24", "the node's pod CIDR: pod IPs, and spec.podCIDR of the Node")
	f.StringVar(&c.StateDir, "state-dir", "/var/lib/dnsplane/agent", "where the pods' files are written (<state-dir>/pods/)")
	f.StringVar(&c.NodeIP, "node-ip", "127.0.0.1", "the Node's InternalIP and the pods' hostIP")
	f.StringVar(&c.HostsFile, "hosts-file", "/etc/hosts", "the node's hosts file, copied into host-network pods' hosts")
	f.IntVar(&daemonPort, "daemon-port", 0, "port of the node's exec server, reported as status.daemonEndpoints.kubeletEndpoint.Port (0 = none; set by --tls-cert-file's server)")
	exec.register(f)
	f.Int32Var(&c.LeaseDurationSeconds, "node-lease-duration-seconds", 40, "the node Lease's duration, as kubelet's flag")
	f.DurationVar(&c.StatusInterval, "node-status-update-frequency", 0, "how often the Node status is written (default 10s), as kubelet's flag")
	f.Float32Var(&apiQPS, "kube-api-qps", 50, "requests per second to the API server, as kubelet's flag (a pod's status write is one)")
	f.IntVar(&apiBurst, "kube-api-burst", 100, "burst of requests to the API server, as kubelet's flag")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}
