package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dnsplane/dnsplane/internal/apiserver"
	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/corefile"
)

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
	return cmd
}

func (u *upFlags) run(cmd *cobra.Command) error {
	usage := func(format string, a ...any) error {
		return &exitError{code: exitUsage, msg: fmt.Sprintf(format, a...)}
	}
	if u.optionCode < 65001 || u.optionCode > 65534 {
		return usage("--option-code %d: want an EDNS0 local option code, 65001-65534", u.optionCode)
	}
	if _, err := netip.ParseAddrPort(u.dnsListen); err != nil {
		return usage("--dns-listen %q: want ADDR:PORT", u.dnsListen)
	}
	if u.nodeCacheListen != "" {
		if _, err := netip.ParseAddrPort(u.nodeCacheListen); err != nil {
			return usage("--nodecache-listen %q: want ADDR:PORT", u.nodeCacheListen)
		}
	}
	upstreams, search, err := nodeResolvers(cmd, u.resolvConf, u.upstreams)
	if err != nil {
		return err
	}
	own := []string{u.dnsListen, u.nodeCacheListen, fallbackNodeCacheListen}
	for _, up := range upstreams {
		if a, err := corefile.UpstreamAddr(up); err == nil && slices.Contains(own, a) {
			return usage("upstream resolver %s is an address of dnsplane itself (a forwarding loop); give --upstream", up)
		}
	}
	explicit := cmd.Flags().Changed("nodecache-listen")
	return u.api.run(cmd, func(ctx context.Context, logger *slog.Logger, run *apiserver.Running) (string, func(), error) {
		return u.startDNS(ctx, logger, run, upstreams, search, explicit)
	})
}

// startDNS starts the cluster DNS and then the node cache in front of it.
func (u *upFlags) startDNS(ctx context.Context, logger *slog.Logger, run *apiserver.Running, upstreams, search []string, explicit bool) (string, func(), error) {
	// Only the node cache may choose the search list the cluster DNS
	// expands with: trust the address it forwards from, or no one without
	// it (docs/autopath.md).
	trusted, err := corefile.NodeCacheTrusted(u.dnsListen, u.nodeCacheListen != "")
	if err != nil {
		return "", nil, &exitError{code: exitUsage, msg: fmt.Sprintf("cluster DNS: %s", err)}
	}
	clusterCorefile, err := corefile.ClusterDNS(corefile.ClusterDNSOptions{
		Listen:        u.dnsListen,
		ClusterDomain: u.clusterDomain,
		OptionCode:    uint16(u.optionCode),
		Kubeconfig:    run.Kubeconfig,
		Upstreams:     upstreams,
		Trusted:       trusted,
	})
	if err != nil {
		return "", nil, &exitError{code: exitUsage, msg: fmt.Sprintf("cluster DNS: %s", err)}
	}
	logger.Debug("cluster DNS Corefile", "corefile", clusterCorefile)
	cluster, err := coredns.Start(ctx, clusterCorefile, logger.With("role", "cluster-dns"))
	if err != nil {
		var inUse *coredns.AddrInUseError
		if errors.As(err, &inUse) {
			return "", nil, &exitError{code: exitInvalid, msg: fmt.Sprintf("cluster DNS: %s (--dns-listen picks another address)", err)}
		}
		return "", nil, &exitError{code: exitInvalid, msg: fmt.Sprintf("cluster DNS on %s: %s", u.dnsListen, err)}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "dnsplane is up\n  API server:  %s\n  kubeconfig:  %s\n  cluster DNS: %s\n", run.URL, run.Kubeconfig, u.dnsListen)
	listen := u.nodeCacheListen
	if listen == "" {
		fmt.Fprintf(&b, "  node cache:  off\n")
		b.WriteString(tryLines(run.Kubeconfig, u.dnsListen, u.clusterDomain))
		return b.String(), func() { _ = cluster.Stop() }, nil
	}
	if err := coredns.CanListen(listen); err != nil && !explicit && fallbackOK(err) {
		logger.Warn("node cache: cannot listen on the default address; using the fallback",
			"default", listen, "fallback", fallbackNodeCacheListen, "err", err)
		listen = fallbackNodeCacheListen
	}
	nodeCorefile, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:        []string{listen},
		ClusterDNS:    []string{u.dnsListen},
		ClusterDomain: u.clusterDomain,
		OptionCode:    uint16(u.optionCode),
		Upstreams:     upstreams,
		HostSearch:    search,
	})
	if err != nil {
		_ = cluster.Stop()
		return "", nil, &exitError{code: exitUsage, msg: fmt.Sprintf("node cache: %s", err)}
	}
	logger.Debug("node cache Corefile", "corefile", nodeCorefile)
	node, err := coredns.Start(ctx, nodeCorefile, logger.With("role", "nodecache"))
	if err != nil {
		_ = cluster.Stop()
		return "", nil, &exitError{code: exitInvalid, msg: fmt.Sprintf("node cache on %s: %s (--nodecache-listen picks another address, \"\" turns it off)", listen, err)}
	}
	fmt.Fprintf(&b, "  node cache:  %s\n", listen)
	b.WriteString(tryLines(run.Kubeconfig, listen, u.clusterDomain))
	return b.String(), func() { _ = node.Stop(); _ = cluster.Stop() }, nil
}

// fallbackOK reports whether a failure to bind the default node cache
// address is one the fallback address avoids: no privilege for port 53,
// or the port taken by another resolver.
func fallbackOK(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EADDRINUSE)
}

// tryLines are the banner's examples for a DNS server at addr.
func tryLines(kubeconfig, addr, clusterDomain string) string {
	ap := netip.MustParseAddrPort(addr)
	cd := strings.Trim(clusterDomain, ".")
	return fmt.Sprintf(`
Try:
  kubectl --kubeconfig %s get namespaces
  dig @%s -p %d kubernetes.default.svc.%s
  dig @%s -p %d kubernetes.search.default.%s.ap.k8s.io   # autopath: CNAME to the Service
`, kubeconfig, ap.Addr(), ap.Port(), cd, ap.Addr(), ap.Port(), cd)
}
