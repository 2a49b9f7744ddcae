// Package dnscli holds the data-plane commands, `dns` (the cluster DNS)
// and `nodecache` (the per-node cache), that both the full dnsplane binary
// and the data-plane binary dnsplane-dns wire. It links CoreDNS and
// client-go, never the control plane (k8s.io/kubernetes, k8s.io/apiserver,
// etcd's server): cmd/dnsplane-dns's tests check that.
package dnscli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/cliexit"
	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/residency"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// serveDNS runs corefile until the command's context ends (SIGINT/SIGTERM).
// moveHint says what moves the listen address when another process
// already serves it.
func serveDNS(cmd *cobra.Command, corefile, moveHint string, logger *slog.Logger) error {
	srv, err := coredns.Start(cmd.Context(), corefile, logger)
	if err != nil {
		return cliexit.Invalidf("%s", startError(err, moveHint))
	}
	releaseStartup(logger)(corefile, nil)
	<-srv.Done()
	return nil
}

// releaseStartup returns an OnApply hook that, after the first Corefile
// serves, gives back what only start-up used (internal/residency): the
// data-plane commands run the whole binary's package inits, whose pages
// would otherwise stay in their resident set.
func releaseStartup(logger *slog.Logger) func(string, error) {
	var once sync.Once
	return func(_ string, err error) {
		if err != nil {
			return
		}
		once.Do(func() {
			r, err := residency.Release()
			if err != nil {
				logger.Warn("cannot release start-up memory", "err", err)
				return
			}
			logger.Debug("released start-up memory", "mappings", r.Mappings, "rssBefore", r.RSSBefore, "rssAfter", r.RSSAfter)
		})
	}
}

// startError is the message for a DNS server that failed to start: with
// what moves the address (a flag, or the Corefile itself) when another
// process already serves it, since CoreDNS alone would share it silently.
func startError(err error, moveHint string) string {
	var inUse *coredns.AddrInUseError
	if errors.As(err, &inUse) {
		return fmt.Sprintf("%s (%s)", err, moveHint)
	}
	return err.Error()
}

// clientConfig reads --kubeconfig for dns --configmap; errors are usage
// errors naming the flag.
func clientConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, cliexit.Usagef("--kubeconfig: %v", err)
	}
	return cfg, nil
}

// serveDNSFromConfigMap serves the Corefile key of the ConfigMap ns/name,
// read with kubeconfig, until the command's context ends.
func serveDNSFromConfigMap(cmd *cobra.Command, kubeconfig, ns, name string, logger *slog.Logger) error {
	cfg, err := clientConfig(kubeconfig)
	if err != nil {
		return err
	}
	cfg.ContentType = "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return cliexit.Usagef("--kubeconfig: %s", err)
	}
	o := coredns.ConfigMapOptions{Logger: logger, OnApply: releaseStartup(logger)}
	if err := coredns.RunFromConfigMapWithOptions(cmd.Context(), cs, ns, name, o); err != nil {
		return cliexit.Invalidf("%s", err)
	}
	return nil
}

// NewDNSCommand is the `dns` command: the cluster DNS server.
func NewDNSCommand() *cobra.Command {
	var conf, configMap, kubeconfig, logLevel string
	var reloadInterval time.Duration
	cmd := &cobra.Command{
		Use:   "dns",
		Short: "Run the cluster DNS server (CoreDNS with dnsplane's plugins)",
		Long: `Run the cluster DNS server: CoreDNS used as a library, with the stock plugins
a cluster DNS needs (errors, log, health, ready, prometheus, kubernetes,
forward, cache, reload, loop, loadbalance, bufsize, rewrite, hosts, template,
chaos, autopath, bind) plus searchexpand and searchopt. It serves the Corefile
given with --conf, or the Corefile key of the ConfigMap given with
--configmap NS/NAME (read through --kubeconfig), until SIGINT or SIGTERM.

The file is re-read every --reload-interval and the ConfigMap is watched: a
changed Corefile is applied with a graceful reload that keeps the listeners,
and one that fails to load never replaces the running configuration (it is
logged and counted in dnsplane_dns_config_load_failures_total). While the
ConfigMap, its key or the file is missing the server keeps serving the last
good configuration. The reload plugin is accepted and has nothing to do:
dnsplane applies changes itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			usage := cliexit.Usagef
			switch {
			case conf != "" && configMap != "":
				return usage("--conf and --configmap are mutually exclusive")
			case conf == "" && configMap == "":
				return usage("--conf or --configmap is required")
			case configMap == "" && kubeconfig != "":
				return usage("--kubeconfig is only used with --configmap")
			}
			var ns, name string
			if configMap != "" {
				var ok bool
				ns, name, ok = strings.Cut(configMap, "/")
				if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
					return usage("--configmap %q: want NAMESPACE/NAME", configMap)
				}
				if kubeconfig == "" {
					return usage("--kubeconfig is required with --configmap")
				}
			}
			logger, err := cliexit.NewLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return usage("%s", err)
			}
			if configMap != "" {
				return serveDNSFromConfigMap(cmd, kubeconfig, ns, name, logger)
			}
			if reloadInterval < 0 {
				return usage("--reload-interval %s: want 0 (off) or a positive duration", reloadInterval)
			}
			if _, err := os.Stat(conf); err != nil {
				return usage("%s", err)
			}
			o := coredns.FileOptions{Interval: reloadInterval, Logger: logger, OnApply: releaseStartup(logger)}
			if err := coredns.RunFromFileWithOptions(cmd.Context(), conf, o); err != nil {
				return cliexit.Invalidf("%s", startError(err, "a server block's port or the bind plugin in "+conf+" picks another address"))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&conf, "conf", "", "Corefile to serve")
	f.DurationVar(&reloadInterval, "reload-interval", 5*time.Second, "how often --conf is re-read; a changed Corefile is applied gracefully (0: never)")
	f.StringVar(&configMap, "configmap", "", "NAMESPACE/NAME of a ConfigMap whose Corefile key to serve and watch")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig for --configmap")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

type nodeCacheFlags struct {
	o             corefile.NodeCacheOptions
	optionCode    uint
	resolvConf    string
	printCorefile bool
	logLevel      string
}

// NewNodeCacheCommand is the `nodecache` command: the per-node DNS cache.
func NewNodeCacheCommand() *cobra.Command {
	var n nodeCacheFlags
	cmd := &cobra.Command{
		Use:   "nodecache",
		Short: "Run the per-node DNS cache",
		Long: `Run the per-node DNS cache (CoreDNS used as a library). It listens on
--listen, caches, and forwards every name it does not hold to --cluster-dns:
the cluster domain, ap.k8s.io. and the reverse zones over TCP (tagging
autopath names with the search list option through searchopt), every other
name over UDP. The cluster DNS's Corefile decides where those go (the DNS
resource's forward plugins and upstream resolvers), so the node cache has no
upstream resolvers of its own. The host search list appended to the option
is the search line of --upstream-resolv-conf. It makes no iptables or
interface changes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return n.run(cmd) },
	}
	f := cmd.Flags()
	o := &n.o
	f.StringSliceVar(&o.Listen, "listen", nil, "ADDR:PORT,... to serve on (required)")
	f.StringSliceVar(&o.ClusterDNS, "cluster-dns", nil, "ADDR:PORT,... of the cluster DNS (required)")
	f.StringVar(&o.ClusterDomain, "cluster-domain", "cluster.local", "cluster domain")
	f.UintVar(&n.optionCode, "option-code", 65534, "EDNS0 search list option code (65001-65534)")
	f.StringVar(&n.resolvConf, "upstream-resolv-conf", "/etc/resolv.conf", "resolv.conf whose search line is the node's host search list (its nameservers are not used)")
	f.IntVar(&o.CacheTTL, "cache-ttl", 30, "maximum cache TTL in seconds")
	f.StringVar(&o.Health, "health", "", "ADDR:PORT for the health endpoint (off when empty)")
	f.StringVar(&o.Ready, "ready", "", "ADDR:PORT for the ready endpoint (off when empty)")
	f.StringVar(&o.Metrics, "metrics", "", "ADDR:PORT for Prometheus metrics (off when empty)")
	f.BoolVar(&o.Log, "log-queries", false, "log every query")
	f.BoolVar(&n.printCorefile, "print-corefile", false, "print the generated Corefile and exit")
	f.StringVar(&n.logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

func (n *nodeCacheFlags) run(cmd *cobra.Command) error {
	usage := cliexit.Usagef
	if len(n.o.Listen) == 0 {
		return usage("--listen is required")
	}
	if len(n.o.ClusterDNS) == 0 {
		return usage("--cluster-dns is required")
	}
	if n.optionCode < 65001 || n.optionCode > 65534 {
		return usage("--option-code %d: want an EDNS0 local option code, 65001-65534", n.optionCode)
	}
	if n.o.CacheTTL <= 0 {
		return usage("--cache-ttl %d: want a positive number of seconds", n.o.CacheTTL)
	}
	n.o.OptionCode = uint16(n.optionCode)
	logger, err := cliexit.NewLogger(cmd.ErrOrStderr(), n.logLevel)
	if err != nil {
		return usage("%s", err)
	}

	host, err := resolvconf.ParseFile(n.resolvConf)
	if err != nil {
		return usage("--upstream-resolv-conf: %s", err)
	}
	n.o.HostSearch = host.Searches

	nodeCorefile, err := corefile.NodeCache(n.o)
	if err != nil {
		return usage("%s", err)
	}
	if n.printCorefile {
		_, err := fmt.Fprint(cmd.OutOrStdout(), nodeCorefile)
		return err
	}
	logger.Debug("node cache Corefile", "corefile", nodeCorefile)
	return serveDNS(cmd, nodeCorefile, "--listen picks another address", logger)
}
