// Package dnsroles runs the cluster DNS and the node cache of `dnsplane up`
// as control plane components: the start order (cluster DNS, then the node
// cache in front of it), where they listen (listen.go) and the banner.
// It is the only caller of the CoreDNS runtime and the Corefile generators
// (internal/coredns) on the control plane side, and a package of its own
// so that the control plane (and its test server) links no CoreDNS.
package dnsroles

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// Config is the cluster DNS and node cache `dnsplane up` runs beside the
// API server. Field comments name the flags.
type Config struct {
	// Listen (--dns-listen) is the cluster DNS's ADDR:PORT.
	Listen string
	// ListenDefault says Listen is `up`'s default, not the user's: when
	// another process holds it, ChooseAddresses moves the cluster DNS to
	// the next free address of its range on the same port (listen.go).
	ListenDefault bool
	// NodeCacheListen (--nodecache-listen) is the node cache's ADDR:PORT;
	// empty runs no node cache.
	NodeCacheListen string
	// NodeCacheDefault is ListenDefault for NodeCacheListen.
	NodeCacheDefault bool
	// NodeNames are the nodes of `up --nodes N` when N > 1: each gets a
	// node cache of its own, node i (0-based) on the i-th address after
	// NodeCacheListen, same port (docs/nodes.md). Empty is one node cache,
	// on NodeCacheListen, as `up` has always run.
	NodeNames []string
	// Gate, when set, wraps the node cache of node name (NodeNames, or ""
	// for the one node cache) so that it runs only while the node is up
	// (nodepower, `dnsplane node stop`).
	Gate func(node string, c controlplane.Component) controlplane.Component
	// NodeCacheMetrics (--nodecache-metrics) is the node cache's
	// Prometheus ADDR:PORT (CoreDNS's coredns_dns_requests_total counts the
	// queries pods send, per lookup in the resolver tests); empty is off.
	NodeCacheMetrics string
	// ClusterDomain (--cluster-domain); empty means cluster.local.
	ClusterDomain string
	// OptionCode (--option-code) is the EDNS0 search list option code,
	// 65001-65534; 0 means 65534.
	OptionCode uint
	// Upstreams are the node's ADDR[:PORT] resolvers (--upstream, or the
	// nameservers of --upstream-resolv-conf): the cluster DNS's
	// SystemResolvConf. The node cache sends every miss to the cluster
	// DNS, never to them.
	Upstreams []string
	// HostSearch is the node's host search list (--upstream-resolv-conf).
	HostSearch []string
}

func (d *Config) clusterDomain() string {
	if d.ClusterDomain == "" {
		return "cluster.local"
	}
	return d.ClusterDomain
}

func (d *Config) optionCode() uint16 {
	if d.OptionCode == 0 {
		return 65534
	}
	return uint16(d.OptionCode)
}

// Validate checks the flags and renders both Corefiles once, so that what
// would fail the DNS start fails before etcd starts. Errors are
// *controlplane.ConfigError naming the flag.
func (d *Config) Validate() error {
	if d.OptionCode != 0 && (d.OptionCode < 65001 || d.OptionCode > 65534) {
		return controlplane.ConfigErrorf("--option-code %d: want an EDNS0 local option code, 65001-65534", d.OptionCode)
	}
	if _, err := netip.ParseAddrPort(d.Listen); err != nil {
		return controlplane.ConfigErrorf("--dns-listen %q: want ADDR:PORT", d.Listen)
	}
	if d.NodeCacheListen != "" {
		if _, err := netip.ParseAddrPort(d.NodeCacheListen); err != nil {
			return controlplane.ConfigErrorf("--nodecache-listen %q: want ADDR:PORT", d.NodeCacheListen)
		}
		if _, err := d.plannedNodeCaches(); err != nil {
			return &controlplane.ConfigError{Err: err}
		}
	}
	if len(d.NodeNames) > 1 && d.NodeCacheMetrics != "" {
		return controlplane.ConfigErrorf("--nodecache-metrics %q: one address cannot serve the metrics of %d node caches (--nodes): leave it out", d.NodeCacheMetrics, len(d.NodeNames))
	}
	if planned, _ := d.plannedNodeCaches(); slices.Contains(planned, d.Listen) {
		if len(planned) == 1 {
			return controlplane.ConfigErrorf("--nodecache-listen %q: the cluster DNS's address too (--dns-listen): give each its own", d.NodeCacheListen)
		}
		return controlplane.ConfigErrorf("--nodecache-listen %q: the node caches of %d nodes take %s to %s, which holds the cluster DNS's address (--dns-listen %s): give each its own",
			d.NodeCacheListen, len(planned), planned[0], planned[len(planned)-1], d.Listen)
	}
	if d.NodeCacheMetrics != "" {
		if _, err := netip.ParseAddrPort(d.NodeCacheMetrics); err != nil {
			return controlplane.ConfigErrorf("--nodecache-metrics %q: want ADDR:PORT", d.NodeCacheMetrics)
		}
	}
	cd := strings.ToLower(strings.TrimSuffix(d.clusterDomain(), "."))
	if errs := validation.IsDNS1123Subdomain(cd); len(errs) > 0 {
		return controlplane.ConfigErrorf("--cluster-domain %q: %s", d.ClusterDomain, strings.Join(errs, "; "))
	}
	own := d.ownAddresses()
	for _, up := range d.Upstreams {
		if a, err := corefile.UpstreamAddr(up); err == nil && slices.Contains(own, netip.MustParseAddrPort(a)) {
			return controlplane.ConfigErrorf("upstream resolver %s is an address of dnsplane itself (a forwarding loop); give --upstream", up)
		}
	}
	if _, err := d.clusterCorefile("kubeconfig"); err != nil {
		return &controlplane.ConfigError{Err: err}
	}
	if d.NodeCacheListen != "" {
		if _, err := d.nodeCacheCorefile(d.NodeCacheListen); err != nil {
			return &controlplane.ConfigError{Err: err}
		}
	}
	return nil
}

// ownAddresses are the addresses the cluster DNS and the node cache may
// serve on, which no upstream resolver or DNS resource forwarder may name
// (a forwarding loop): each flag's address, and for a default the whole
// range ChooseAddresses may move it through, so that the list is fixed
// before the addresses are chosen.
func (d *Config) ownAddresses() []netip.AddrPort {
	var out []netip.AddrPort
	addrs := []struct {
		addr    string
		movable bool
	}{{d.Listen, d.ListenDefault}}
	planned, _ := d.plannedNodeCaches()
	for _, nc := range planned {
		addrs = append(addrs, struct {
			addr    string
			movable bool
		}{nc, d.NodeCacheDefault})
	}
	for _, a := range addrs {
		if a.addr == "" {
			continue
		}
		cands := []string{a.addr}
		if a.movable {
			cands = moveCandidates(a.addr)
		}
		for _, c := range cands {
			if ap, err := netip.ParseAddrPort(c); err == nil {
				out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
			}
		}
	}
	return out
}

func (d *Config) clusterCorefile(kubeconfig string) (string, error) {
	// Only the node cache may choose the search list the cluster DNS
	// expands with: trust the address it forwards from, or no one without
	// it (docs/autopath.md).
	trusted, err := corefile.NodeCacheTrusted(d.Listen, d.NodeCacheListen != "")
	if err != nil {
		return "", fmt.Errorf("cluster DNS: %w", err)
	}
	text, err := corefile.ClusterDNS(corefile.ClusterDNSOptions{
		Listen:        d.Listen,
		ClusterDomain: d.clusterDomain(),
		OptionCode:    d.optionCode(),
		Kubeconfig:    kubeconfig,
		Upstreams:     d.Upstreams,
		Trusted:       trusted,
		HostSearch:    d.HostSearch,
	})
	if err != nil {
		return "", fmt.Errorf("cluster DNS: %w", err)
	}
	return text, nil
}

func (d *Config) nodeCacheCorefile(listen string) (string, error) {
	text, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:        []string{listen},
		ClusterDNS:    []string{d.Listen},
		ClusterDomain: d.clusterDomain(),
		OptionCode:    d.optionCode(),
		HostSearch:    d.HostSearch,
		Metrics:       d.NodeCacheMetrics,
	})
	if err != nil {
		return "", fmt.Errorf("node cache: %w", err)
	}
	return text, nil
}

// dnsComponent is one CoreDNS instance: the cluster DNS or the node cache.
// Start binds its listeners; Run serves until its context ends.
type dnsComponent struct {
	name string
	// start chooses the address, renders the Corefile and starts CoreDNS.
	start func(ctx context.Context) (*coredns.Server, error)
	// listen is the address it serves on, set by start.
	listen string
	srv    *coredns.Server
}

func (c *dnsComponent) Name() string { return c.name }

func (c *dnsComponent) Start(ctx context.Context) error {
	srv, err := c.start(ctx)
	if err != nil {
		return err
	}
	c.srv = srv
	return nil
}

func (c *dnsComponent) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return c.srv.Stop()
	case <-c.srv.Done():
		return fmt.Errorf("%s stopped", c.name)
	}
}

// Roles are the cluster DNS and the node cache as control plane
// components: add it to controlplane.Config.Roles.
type Roles struct {
	cfg     Config
	cluster *clusterDNS
	// nodes are the node caches, in the order of NodeNames.
	nodes []*dnsComponent
	// nodeListen are the addresses the node caches serve on, settled by
	// ChooseAddresses (planned until then).
	nodeListen []string
	// probe checks that an address can be bound (probeNamingHolder).
	probe probeFunc
	// moved maps an address ChooseAddresses moved a server to to the
	// default it moved from, for the banner.
	moved map[string]string
	// own are the addresses the DNS servers may serve on (DNSAddresses).
	own []netip.AddrPort
	// id is the cluster DNS's kubeconfig (identity.go).
	id *identity
}

// New returns the DNS roles for c.
func New(c Config) *Roles {
	planned, _ := c.plannedNodeCaches()
	return &Roles{cfg: c, own: c.ownAddresses(), cluster: &clusterDNS{notify: &notifier{}}, probe: probeNamingHolder, moved: map[string]string{},
		nodeListen: planned, id: &identity{}}
}

// DNSAddresses implements controlplane.DNSAddresser: every address the
// cluster DNS and node cache may serve on, fixed at New (the chosen ones
// are among them), so that the API server's goroutines read no field the
// start writes.
func (r *Roles) DNSAddresses() []netip.AddrPort { return slices.Clone(r.own) }

// Listen is the address the cluster DNS serves on: --dns-listen, or where
// ChooseAddresses moved its default.
func (r *Roles) Listen() string { return r.cfg.Listen }

// NodeCacheListen is the address the node cache serves on once started
// (--nodecache-listen, or where ChooseAddresses moved its default), ""
// when there is none.
func (r *Roles) NodeCacheListen() string { return r.NodeCacheListenOf(0) }

// NodeCacheListenOf is NodeCacheListen for node i of NodeNames (0-based).
func (r *Roles) NodeCacheListenOf(i int) string {
	if i < 0 || i >= len(r.nodes) {
		return ""
	}
	return r.nodes[i].listen
}

// ClusterDNS is the cluster DNS as the DNS operator sees it
// (operatorrole.Instances).
func (r *Roles) ClusterDNS() *ClusterDNSInstances { return &ClusterDNSInstances{r: r} }

// RenderOptions are the options the DNS operator renders the cluster
// DNS's Corefile with, so that it serves as `up` always has: on
// --dns-listen, with --cluster-domain, --option-code, the node's
// upstream resolvers, and searchexpand trusting only the node cache. The
// kubeconfig is left to the operator role, which asks ClusterDNS for it
// once the API server runs. Call ChooseAddresses first.
func (r *Roles) RenderOptions() (render.Options, error) {
	d := &r.cfg
	trusted, err := corefile.NodeCacheTrusted(d.Listen, d.NodeCacheListen != "")
	if err != nil {
		return render.Options{}, fmt.Errorf("cluster DNS: %w", err)
	}
	return render.Options{
		ClusterDomain:   d.clusterDomain(),
		Listen:          d.Listen,
		OptionCode:      d.optionCode(),
		Trusted:         trusted,
		InProcess:       true,
		SystemResolvers: d.Upstreams,
		HostSearch:      d.HostSearch,
		OwnAddresses:    d.ownAddresses(),
	}, nil
}

// Validate implements controlplane.Role.
func (r *Roles) Validate() error { return r.cfg.Validate() }

// Components implements controlplane.Role: the cluster DNS, reading its
// ConfigMap with its own credentials (identity.go), and then, in front of
// it, the node cache, which reads no API.
func (r *Roles) Components(cl controlplane.Cluster) ([]controlplane.Component, error) {
	kubeconfig, err := r.kubeconfig(cl)
	if err != nil {
		return nil, err
	}
	cluster, nodes := r.cfg.components(kubeconfig, r.nodeListen, cl.Logger)
	cluster.notify = r.cluster.notify
	if cl.DataDir != "" {
		cluster.filesDir = operator.InProcessCABundleDir(cl.DataDir)
	}
	r.cluster, r.nodes = cluster, nodes
	out := []controlplane.Component{cluster}
	for i, n := range nodes {
		var c controlplane.Component = n
		if r.cfg.Gate != nil {
			c = r.cfg.Gate(r.cfg.nodeName(i), n)
		}
		out = append(out, c)
	}
	return out, nil
}

// Banner implements controlplane.Bannerer: where the API server, the
// kubeconfig and the DNS servers are, and how to try them. It is called
// once the components have started.
func (r *Roles) Banner(cl controlplane.Cluster) string {
	d := &r.cfg
	var b strings.Builder
	fmt.Fprintf(&b, "dnsplane is up\n  API server:  %s\n  kubeconfig:  %s\n  cluster DNS: %s%s\n", cl.URL, cl.Kubeconfig,
		d.Listen, r.bannerNote(d.Listen))
	try := d.Listen
	switch {
	case len(r.nodes) == 0:
		b.WriteString("  node cache:  off\n")
	case len(d.NodeNames) <= 1:
		try = r.nodes[0].listen
		fmt.Fprintf(&b, "  node cache:  %s%s\n", try, r.bannerNote(try))
	default:
		// One line per node, the first in the one-node form that scripts
		// and the docs read ("  node cache:  ADDR").
		try = r.nodes[0].listen
		for i, n := range r.nodes {
			label := "  node cache:  "
			if i > 0 {
				label = "               "
			}
			fmt.Fprintf(&b, "%s%s on %s%s\n", label, n.listen, d.NodeNames[i], r.bannerNote(n.listen))
		}
	}
	b.WriteString(tryLines(cl.Kubeconfig, try, d.clusterDomain()))
	return b.String()
}

// components are the cluster DNS, serving the DNS operator's ConfigMap,
// which it reads with kubeconfig, and then, in front of it, the node
// cache.
func (d *Config) components(kubeconfig string, nodeListen []string, logger *slog.Logger) (cluster *clusterDNS, nodes []*dnsComponent) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cluster = &clusterDNS{listen: d.Listen, kubeconfig: kubeconfig, logger: logger.With("role", "cluster-dns"), first: make(chan error, 1)}
	for i, listen := range nodeListen {
		name, nlog := "nodecache", logger.With("role", "nodecache")
		if node := d.nodeName(i); node != "" {
			name, nlog = "nodecache/"+node, nlog.With("node", node)
		}
		node := &dnsComponent{name: name, listen: listen}
		node.start = func(ctx context.Context) (*coredns.Server, error) {
			text, err := d.nodeCacheCorefile(listen)
			if err != nil {
				return nil, &controlplane.ConfigError{Err: err}
			}
			nlog.Debug("node cache Corefile", "corefile", text)
			srv, err := coredns.Start(context.WithoutCancel(ctx), text, nlog)
			if err != nil {
				return nil, fmt.Errorf("node cache on %s: %w (--nodecache-listen picks another address, \"\" turns it off)", listen, err)
			}
			return srv, nil
		}
		nodes = append(nodes, node)
	}
	return cluster, nodes
}

// nodeName is the name of node i (NodeNames), "" for the one node cache.
func (d *Config) nodeName(i int) string {
	if len(d.NodeNames) <= 1 {
		return ""
	}
	return d.NodeNames[i]
}

// plannedNodeCaches are the node caches' addresses before ChooseAddresses:
// NodeCacheListen, and for each further node of NodeNames the next address
// on the same port, within NodeCacheListen's /24 (docs/nodes.md). None
// when NodeCacheListen is empty.
func (d *Config) plannedNodeCaches() ([]string, error) {
	if d.NodeCacheListen == "" {
		return nil, nil
	}
	ap, err := netip.ParseAddrPort(d.NodeCacheListen)
	if err != nil {
		return nil, fmt.Errorf("--nodecache-listen %q: want ADDR:PORT", d.NodeCacheListen)
	}
	n := max(len(d.NodeNames), 1)
	out := []string{d.NodeCacheListen}
	block := netip.PrefixFrom(ap.Addr(), 24).Masked()
	ip := ap.Addr()
	for len(out) < n {
		ip = ip.Next()
		if !ip.IsValid() || (ap.Addr().Is4() && !block.Contains(ip)) {
			return nil, fmt.Errorf("--nodecache-listen %s: the node caches of %d nodes (--nodes) take it and the next %d addresses, which leave its /24: choose a lower address",
				d.NodeCacheListen, n, n-1)
		}
		out = append(out, netip.AddrPortFrom(ip, ap.Port()).String())
	}
	return out, nil
}

// tryLines are the banner's examples for a DNS server at addr: the
// environment kubectl needs, then a look at the nodes, a workload the
// scheduler spreads over them and a name the DNS server answers
// (docs/operations.md, "Start-up").
func tryLines(kubeconfig, addr, clusterDomain string) string {
	ap := netip.MustParseAddrPort(addr)
	cd := strings.Trim(clusterDomain, ".")
	dig := "dig @" + ap.Addr().String()
	if ap.Port() != 53 {
		dig += fmt.Sprintf(" -p %d", ap.Port())
	}
	return fmt.Sprintf(`
Try:
  export KUBECONFIG=%s
  kubectl get nodes
  kubectl create deployment web --image=nginx --replicas=3
  %s kubernetes.default.svc.%s
  %s kubernetes.search.default.%s.ap.k8s.io   # autopath: CNAME to the Service
`, controlplane.ShellQuote(kubeconfig), dig, cd, dig, cd)
}
