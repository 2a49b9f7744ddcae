package corefile

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// ClusterDNSOptions describe a cluster DNS: the kubernetes plugin for the
// cluster domain and reverse zones, searchexpand for autopath names, and
// forward for everything else, optionally with stub domains forwarded to
// nameservers of their own. `dnsplane up` runs one; the DNS operator
// renders the Corefile of its DaemonSet with the same options
// (internal/operator/render), so the two have the same shape.
type ClusterDNSOptions struct {
	// Listen is the ADDR:PORT the cluster DNS serves on (UDP and TCP), or
	// :PORT for every address of the host (no bind plugin), as the pods
	// of a DaemonSet do.
	Listen string
	// ClusterDomain defaults to cluster.local.
	ClusterDomain string
	// OptionCode is the EDNS0 search list option code; 0 means 65534.
	OptionCode uint16
	// Kubeconfig is the kubeconfig the kubernetes plugin reads the API
	// with (its current context).
	Kubeconfig string
	// Endpoint is the URL of an API server the kubernetes plugin reads
	// without credentials (kubectl proxy), instead of a kubeconfig.
	Endpoint string
	// InCluster makes the kubernetes plugin use the service account of
	// the pod it runs in, as a cluster DNS DaemonSet's pods do. Exactly
	// one of Kubeconfig, Endpoint and InCluster is set.
	InCluster bool
	// Upstreams are ADDR[:PORT] resolvers for names outside the cluster,
	// or ResolvConf for the nameservers of the host's /etc/resolv.conf.
	Upstreams []string
	// Forward configures forwarding to Upstreams.
	Forward ForwardOptions
	// Stubs are domains forwarded to nameservers of their own, each in a
	// server block of its own ahead of the cluster block, with the same
	// errors, log, metrics and cache. CoreDNS gives a query to the block
	// with the longest zone that is a suffix of its name.
	Stubs []StubDomain
	// Trusted are the prefixes the search list option is accepted from;
	// empty accepts it from any client, and TrustNone alone from none.
	// NodeCacheTrusted gives what `dnsplane up` uses.
	Trusted []string
	// HostSearch is the node's host search list, which searchexpand tries
	// after the derived list for autopath queries without a usable option
	// (`host_search`), as CoreDNS's autopath appends its own resolv.conf's.
	HostSearch []string
	// CacheTTL is the cache's maximum TTL in seconds; 0 means 30.
	CacheTTL int
	// DenialTTL is the maximum TTL of cached negative answers (NXDOMAIN,
	// NODATA) in seconds; 0 means CacheTTL.
	DenialTTL int
	// Health, Ready and Metrics are ADDR:PORT for the health, ready and
	// prometheus endpoints; empty leaves the endpoint out. Metrics are
	// exported by every server block, so each stub domain has its own.
	Health, Ready, Metrics string
	// Log adds the log plugin (every query logged).
	Log bool
	// LogClasses adds the log plugin for answers of these classes only
	// (success, denial, error, all), in every server block.
	LogClasses []string
	// Reload adds the reload plugin, which reloads the Corefile when its
	// file changes (a mounted ConfigMap). dnsplane's own runtime applies
	// changes itself (internal/coredns), so the plugin is for stock
	// CoreDNS reading a file.
	Reload bool
	// Loop adds the loop plugin, which stops CoreDNS when its queries come
	// back to it. Only for a process that runs nothing else: see
	// ClusterDNS.
	Loop bool
}

// ResolvConf as an upstream forwards to the nameservers of the host's
// /etc/resolv.conf, which CoreDNS's forward plugin reads at start.
const ResolvConf = "/etc/resolv.conf"

// ForwardOptions configure a forward plugin beyond its upstreams.
type ForwardOptions struct {
	// Policy is random, round_robin or sequential; empty leaves
	// CoreDNS's default (random).
	Policy string
	// TLS forwards over DNS over TLS: each upstream gets tls:// and port
	// 853 when it names none. ResolvConf cannot be used with it.
	TLS bool
	// TLSServerName is the name the upstreams' certificates are checked
	// against; required with TLS.
	TLSServerName string
	// TLSCAFile is the PEM file of the certificate authorities that sign
	// the upstreams' certificates; empty trusts the system's.
	TLSCAFile string
	// ForceTCP sends every query over TCP (force_tcp). Otherwise queries
	// go over UDP, whatever the client used, and a truncated answer is
	// retried over TCP (prefer_udp): the transport rule of
	// docs/dns-operator.md ("The Corefile"); the node cache reaches the
	// cluster DNS over TCP, which the upstreams should not all see (TCP handshakes to cloud resolvers are slow and
	// throttled, kubernetes#111975). Over TLS neither applies.
	ForceTCP bool
}

// MaxConcurrent is the max_concurrent of every forward plugin we render:
// the queries one forward plugin has in flight before it refuses more
// (REFUSED at once, not counted as a health failure). Each query in
// flight holds a socket to an upstream until it answers or the plugin's
// 5s deadline passes, so without it an upstream that never answers turns
// the query rate into open descriptors (rate × 5s), and in `dnsplane up`
// those are the API server's descriptors too. 1000 is what kubeadm's and
// coredns/deployment's Corefiles use, the forward plugin's README sizes
// it as "upstream query rate × latency" (1000 covers 10,000 qps at
// 100ms), and it costs about 2 KB of memory per query in flight.
// docs/dns-operator.md, "Bounded forwarding".
const MaxConcurrent = 1000

// maxConcurrent is the property line every forward plugin ends with.
var maxConcurrent = Directive{Name: "max_concurrent", Args: []string{strconv.Itoa(MaxConcurrent)}}

// StubDomain is a domain forwarded to nameservers of its own.
type StubDomain struct {
	// Domain is the zone, such as example.com.
	Domain string
	// Upstreams are its ADDR[:PORT] nameservers.
	Upstreams []string
	// Forward configures forwarding to Upstreams.
	Forward ForwardOptions
}

// ClusterDNS renders the cluster DNS Corefile for o.
//
// `dnsplane up` leaves the loop plugin out on purpose (Loop false): it
// exits the process when it detects a forwarding loop, and in `dnsplane
// up` that process is also the API server. Callers check their upstreams
// instead, and every server block has loopguard, which answers a looping
// query instead of forwarding it again (plugin/loopguard).
func ClusterDNS(o ClusterDNSOptions) (string, error) {
	c, err := clusterDNSModel(o)
	if err != nil {
		return "", err
	}
	return c.Render()
}

// clusterDNSModel validates o and builds the cluster DNS Corefile.
func clusterDNSModel(o ClusterDNSOptions) (Corefile, error) {
	cd, code, ttl, err := common(o.ClusterDomain, o.OptionCode, o.CacheTTL)
	if err != nil {
		return Corefile{}, err
	}
	port, bind, err := parseListen(o.Listen)
	if err != nil {
		return Corefile{}, err
	}
	kube, err := kubernetesConnection(o)
	if err != nil {
		return Corefile{}, err
	}
	if len(o.Upstreams) == 0 {
		return Corefile{}, errors.New("no upstream resolver")
	}
	forward, err := forwardPlugin(o.Upstreams, o.Forward)
	if err != nil {
		return Corefile{}, err
	}
	var trusted []string
	for _, t := range o.Trusted {
		if t == TrustNone {
			if len(o.Trusted) > 1 {
				return Corefile{}, fmt.Errorf("trusted %q cannot be combined with prefixes", TrustNone)
			}
			trusted = append(trusted, TrustNone)
			continue
		}
		p, err := netip.ParsePrefix(t)
		if err != nil {
			a, aerr := netip.ParseAddr(t)
			if aerr != nil {
				return Corefile{}, fmt.Errorf("trusted prefix %q: want CIDR or address", t)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		trusted = append(trusted, p.String())
	}
	if err := checkEndpoints(o.Health, o.Ready, o.Metrics); err != nil {
		return Corefile{}, err
	}
	logPlugin, err := logPlugin(o.Log, o.LogClasses)
	if err != nil {
		return Corefile{}, err
	}
	if o.DenialTTL < 0 {
		return Corefile{}, fmt.Errorf("denial TTL %d: want 0 or more seconds", o.DenialTTL)
	}
	cache := cachePlugin(ttl, o.DenialTTL)

	// head are the plugins every server block starts with.
	head := func() []Plugin {
		ps := []Plugin{{Name: "errors"}}
		if logPlugin != nil {
			ps = append(ps, *logPlugin)
		}
		if bind != "" {
			ps = append(ps, Plugin{Name: "bind", Args: []string{bind}})
		}
		return append(ps, loopguardPlugin(code), warmstackPlugin)
	}

	var c Corefile
	seen := map[string]bool{}
	for _, stub := range o.Stubs {
		zone := strings.ToLower(strings.Trim(stub.Domain, "."))
		if err := CheckToken(zone); err != nil {
			return Corefile{}, fmt.Errorf("stub domain %w", err)
		}
		if zone == cd || seen[zone] {
			// CoreDNS refuses a zone defined twice on one port.
			return Corefile{}, fmt.Errorf("stub domain %q: defined twice", stub.Domain)
		}
		seen[zone] = true
		if len(stub.Upstreams) == 0 {
			return Corefile{}, fmt.Errorf("stub domain %q: no upstream", stub.Domain)
		}
		fwd, err := forwardPlugin(stub.Upstreams, stub.Forward)
		if err != nil {
			return Corefile{}, fmt.Errorf("stub domain %q: %w", stub.Domain, err)
		}
		ps := head()
		if o.Metrics != "" {
			ps = append(ps, Plugin{Name: "prometheus", Args: []string{o.Metrics}})
		}
		if rz := ReverseZones(zone); len(rz) > 0 {
			// CoreDNS gives a query to the block with the longest zone,
			// so this block, not the cluster block, gets the PTR queries
			// for Service and pod IPs in its zone: answer those from the
			// cluster first and forward the rest. The plugin names its
			// PTR targets in its first zone, which must be the cluster
			// domain ("non-reverse zone name must be used"); no query for
			// it reaches this block.
			ps = append(ps, Plugin{Name: "kubernetes", Args: append([]string{cd}, rz...), Block: append(slices.Clone(kube),
				Directive{Name: "pods", Args: []string{"insecure"}},
				Directive{Name: "fallthrough", Args: rz},
			)})
		}
		c.Servers = append(c.Servers, Server{Zones: []string{zone + ":" + port}, Plugins: append(ps, fwd, cache)})
	}

	ps := head()
	if o.Health != "" {
		// lameduck keeps answering while a stopping replica leaves the
		// Service's endpoints (coredns#5409).
		ps = append(ps, Plugin{Name: "health", Args: []string{o.Health}, Block: []Directive{{Name: "lameduck", Args: []string{"5s"}}}})
	}
	if o.Ready != "" {
		ps = append(ps, Plugin{Name: "ready", Args: []string{o.Ready}})
	}
	if o.Metrics != "" {
		ps = append(ps, Plugin{Name: "prometheus", Args: []string{o.Metrics}})
	}
	expand := Plugin{Name: "searchexpand", Args: []string{cd}, Block: []Directive{{Name: "code", Args: []string{strconv.Itoa(int(code))}}}}
	if len(trusted) > 0 {
		expand.Block = append(expand.Block, Directive{Name: "trusted", Args: trusted})
	}
	if len(o.HostSearch) > 0 {
		expand.Block = append(expand.Block, Directive{Name: "host_search", Args: o.HostSearch})
	}
	ps = append(ps, expand,
		Plugin{Name: "kubernetes", Args: []string{cd, "in-addr.arpa", "ip6.arpa"}, Block: append(kube,
			Directive{Name: "pods", Args: []string{"insecure"}},
			Directive{Name: "fallthrough", Args: []string{"in-addr.arpa", "ip6.arpa"}},
		)},
		forward,
		cache,
	)
	if o.Reload {
		ps = append(ps, Plugin{Name: "reload"})
	}
	if o.Loop {
		ps = append(ps, Plugin{Name: "loop"})
	}
	c.Servers = append(c.Servers, Server{Zones: []string{".:" + port}, Plugins: ps})
	return c, nil
}

// reverseZones are the reverse zones the cluster DNS's kubernetes plugin
// answers PTR queries in.
var reverseZones = []string{"in-addr.arpa", "ip6.arpa"}

// ReverseZones returns the part of the reverse zones that a stub domain
// zone (lower case, no trailing dot) takes from the cluster block: the
// zone itself when it is a reverse zone or under one (10.in-addr.arpa),
// the reverse zones under it when it is above them (arpa), nil otherwise.
// The stub block answers the cluster's reverse names in them itself.
func ReverseZones(zone string) []string {
	var out []string
	for _, rz := range reverseZones {
		switch {
		case zone == rz || strings.HasSuffix(zone, "."+rz):
			return []string{zone}
		case strings.HasSuffix(rz, "."+zone):
			out = append(out, rz)
		}
	}
	return out
}

// loopGuardCode is plugin/loopguard's default marker option code
// (loopguard.DefaultCode; this package links no plugin).
const loopGuardCode = 65533

// loopguardPlugin stops forwarding loops at their first repetition
// (plugin/loopguard): every server block of every Corefile we render has
// one, since any block that forwards can be part of a loop. Its marker
// option must not take the autopath search list option's code.
func loopguardPlugin(searchCode uint16) Plugin {
	p := Plugin{Name: "loopguard"}
	if searchCode == loopGuardCode {
		p.Block = []Directive{{Name: "code", Args: []string{strconv.Itoa(loopGuardCode - 1)}}}
	}
	return p
}

// warmstackPlugin serves queries on workers with grown stacks
// (plugin/warmstack): every server block of every Corefile we render has
// one, since each query otherwise grows a new goroutine's stack through
// the whole chain.
var warmstackPlugin = Plugin{Name: "warmstack"}

// parseListen splits a listen address into the port of the zone keys and
// the address to bind ("" for every address).
func parseListen(listen string) (port, bind string, err error) {
	if p, ok := strings.CutPrefix(listen, ":"); ok {
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			return strconv.FormatUint(n, 10), "", nil
		}
	} else if ap, err := netip.ParseAddrPort(listen); err == nil {
		return strconv.Itoa(int(ap.Port())), ap.Addr().String(), nil
	}
	return "", "", fmt.Errorf("listen address %q: want ADDR:PORT or :PORT", listen)
}

// kubernetesConnection is how the kubernetes plugin reaches the API: the
// property lines of its block.
func kubernetesConnection(o ClusterDNSOptions) ([]Directive, error) {
	set := 0
	for _, b := range []bool{o.Kubeconfig != "", o.Endpoint != "", o.InCluster} {
		if b {
			set++
		}
	}
	switch {
	case set == 0:
		return nil, errors.New("no kubeconfig, endpoint or in-cluster configuration for the kubernetes plugin")
	case set > 1:
		return nil, errors.New("more than one of kubeconfig, endpoint and in-cluster configuration for the kubernetes plugin")
	case o.Kubeconfig != "":
		if err := CheckToken(o.Kubeconfig); err != nil {
			return nil, fmt.Errorf("kubeconfig path %w", err)
		}
		return []Directive{{Name: "kubeconfig", Args: []string{o.Kubeconfig}}}, nil
	case o.Endpoint != "":
		if err := CheckToken(o.Endpoint); err != nil {
			return nil, fmt.Errorf("endpoint %w", err)
		}
		return []Directive{{Name: "endpoint", Args: []string{o.Endpoint}}}, nil
	}
	return nil, nil // in-cluster: the plugin's default
}

// forwardPolicies are the forward plugin's policy names.
var forwardPolicies = []string{"random", "round_robin", "sequential"}

// forwardPlugin builds `forward . TO...` for upstreams with o's options.
func forwardPlugin(upstreams []string, o ForwardOptions) (Plugin, error) {
	to := []string{"."}
	for _, u := range upstreams {
		if u == ResolvConf {
			if o.TLS {
				return Plugin{}, fmt.Errorf("upstream %s cannot be used over TLS", ResolvConf)
			}
			to = append(to, u)
			continue
		}
		port := uint16(53)
		if o.TLS {
			port = 853
		}
		a, err := upstreamAddr(u, port)
		if err != nil {
			return Plugin{}, err
		}
		if o.TLS {
			a = "tls://" + a
		}
		to = append(to, a)
	}
	var block []Directive
	if o.TLS {
		if o.TLSServerName == "" {
			return Plugin{}, errors.New("TLS without a server name")
		}
		if err := CheckToken(o.TLSServerName); err != nil {
			return Plugin{}, fmt.Errorf("TLS server name %w", err)
		}
		block = append(block, Directive{Name: "tls_servername", Args: []string{o.TLSServerName}})
		tls := Directive{Name: "tls"}
		if o.TLSCAFile != "" {
			if err := CheckToken(o.TLSCAFile); err != nil {
				return Plugin{}, fmt.Errorf("TLS CA file %w", err)
			}
			tls.Args = []string{o.TLSCAFile}
		}
		block = append(block, tls)
	} else if o.TLSServerName != "" || o.TLSCAFile != "" {
		return Plugin{}, errors.New("TLS server name or CA file without TLS")
	}
	if o.Policy != "" {
		if !slices.Contains(forwardPolicies, o.Policy) {
			return Plugin{}, fmt.Errorf("forward policy %q: want one of %s", o.Policy, strings.Join(forwardPolicies, ", "))
		}
		block = append(block, Directive{Name: "policy", Args: []string{o.Policy}})
	}
	switch {
	case o.ForceTCP:
		block = append(block, Directive{Name: "force_tcp"})
	case !o.TLS:
		block = append(block, Directive{Name: "prefer_udp"})
	}
	block = append(block, maxConcurrent)
	return Plugin{Name: "forward", Args: to, Block: block}, nil
}

// logClasses are the log plugin's answer classes.
var logClasses = []string{"success", "denial", "error", "all"}

// logPlugin is the log plugin for every query (all) or for answers of
// some classes only; nil when neither is asked for.
func logPlugin(all bool, classes []string) (*Plugin, error) {
	if len(classes) == 0 {
		if all {
			return &Plugin{Name: "log"}, nil
		}
		return nil, nil
	}
	for _, c := range classes {
		if !slices.Contains(logClasses, c) {
			return nil, fmt.Errorf("log class %q: want one of %s", c, strings.Join(logClasses, ", "))
		}
	}
	return &Plugin{Name: "log", Args: []string{"."}, Block: []Directive{{Name: "class", Args: classes}}}, nil
}

// cachePlugin caches answers for at most ttl seconds, and negative
// answers for at most denial seconds when that is set and differs.
func cachePlugin(ttl, denial int) Plugin {
	p := Plugin{Name: "cache", Args: []string{strconv.Itoa(ttl)}}
	if denial != 0 && denial != ttl {
		// 9984 is the cache plugin's default denial capacity; the
		// property needs it to set the TTL after it.
		p.Block = []Directive{{Name: "denial", Args: []string{"9984", strconv.Itoa(denial)}}}
	}
	return p
}

// common applies the defaults both Corefiles share and checks the cluster
// domain.
func common(clusterDomain string, code uint16, ttl int) (string, uint16, int, error) {
	cd := strings.ToLower(strings.Trim(clusterDomain, "."))
	if cd == "" {
		cd = "cluster.local"
	}
	if err := CheckToken(cd); err != nil {
		return "", 0, 0, fmt.Errorf("cluster domain %w", err)
	}
	if code == 0 {
		code = defaultOptionCode
	}
	if ttl == 0 {
		ttl = 30
	}
	return cd, code, ttl, nil
}

// checkEndpoints checks the health, ready and metrics addresses; empty
// ones are left out of the Corefile.
func checkEndpoints(health, ready, metrics string) error {
	for _, e := range []struct{ name, v string }{{"health", health}, {"ready", ready}, {"metrics", metrics}} {
		if e.v == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(e.v); err != nil {
			return fmt.Errorf("%s address %q: want [ADDR]:PORT", e.name, e.v)
		}
		if err := CheckToken(e.v); err != nil {
			return fmt.Errorf("%s address %w", e.name, err)
		}
	}
	return nil
}

// TrustNone as the only ClusterDNSOptions.Trusted entry accepts the
// search list option from no client (searchexpand's `trusted none`).
const TrustNone = "none"

// NodeCacheTrusted returns ClusterDNSOptions.Trusted for a cluster DNS on
// clusterDNS (ADDR:PORT) whose only legitimate sender of the search list
// option is a node cache on this machine forwarding to that address, as in
// `dnsplane up`: the address that node cache sends from, or TrustNone when
// there is no node cache (nodeCache false), since then nobody has a reason
// to send the option. Any other client that sends one gets the derived
// list instead of choosing the search list, and with it the upstream
// queries, itself.
//
// The address is not the node cache's listen address: forward (without
// source_address) lets the kernel pick the source for the route to the
// cluster DNS. For a loopback cluster DNS that is 127.0.0.1 (or ::1)
// whatever loopback address the node cache listens on, so local processes
// that query the cluster DNS from that address are trusted too; clients on
// other addresses are not.
func NodeCacheTrusted(clusterDNS string, nodeCache bool) ([]string, error) {
	if !nodeCache {
		return []string{TrustNone}, nil
	}
	src, err := ForwardSource(clusterDNS)
	if err != nil {
		return nil, err
	}
	return []string{src.String()}, nil
}

// ForwardSource returns the source address the kernel picks for packets to
// addr (ADDR:PORT), which is the one CoreDNS's forward plugin sends from
// when source_address is not set (it dials with no local address). It
// connects a UDP socket, which looks up the route and sends nothing.
func ForwardSource(addr string) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("address %q: want ADDR:PORT", addr)
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ap))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("source address towards %s: %w", addr, err)
	}
	defer c.Close()
	local, ok := c.LocalAddr().(*net.UDPAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("source address towards %s: local address %v", addr, c.LocalAddr())
	}
	return local.AddrPort().Addr().Unmap(), nil
}
